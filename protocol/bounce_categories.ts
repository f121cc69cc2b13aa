import type { BounceCategory } from './events.ts'

/**
 * What a bounce says about the recipient, for `bounced` events of SMTP replies and of DSNs alike. The enhanced
 * status code (RFC 3463) decides when it is one of the table's; otherwise (none, or a generic one such as 5.0.0)
 * the reply's text and code do. Its class digit does not matter: a spent 4.2.2 is a full mailbox as a 5.2.2 is.
 *
 * | enhanced status                | text (no or generic enhanced status)                     | category       |
 * |--------------------------------|----------------------------------------------------------|----------------|
 * | X.7.x                          | spam, blocked, blacklisted, policy, DMARC, reputation     | `policy`       |
 * | X.6.x                          | virus, malware, content                                   | `content`      |
 * | X.2.3, X.3.4                   | too large, size limit; else reply 552                     | `size`         |
 * | X.2.2                          | quota, mailbox full                                       | `mailbox_full` |
 * | X.1.2, X.1.10, X.4.4           | domain not found, no MX, host not found, unrouteable      | `domain`       |
 * | X.1.x (but X.1.7, X.1.8), X.2.1| user unknown, no such user, does not exist, disabled      | `mailbox`      |
 * | anything else (X.1.7 and X.1.8 are about the sender) |                                     | `other`        |
 *
 * Only `mailbox` and `domain` say the address cannot receive mail (see `suppresses`). `operator` is no reply's: an
 * operator bounced waiting mail (protocol/queues.ts), and the text rules never give it.
 */
export const BOUNCE_CATEGORIES: readonly BounceCategory[] = [
  'mailbox', 'domain', 'policy', 'content', 'size', 'mailbox_full', 'other', 'operator'
]

/** The enhanced status code at the start of a reply (`550 5.1.1 …`, `550-5.1.1 …`, `5.1.2 …`), or ''. */
export function enhancedStatus (reply: string): string {
  return /^\s*(?:\d{3}[ -]\s*)?([245]\.\d{1,3}\.\d{1,3})(?![\d.])/.exec(reply)?.[1] ?? ''
}

function categoryOfStatus (status: string): BounceCategory | undefined {
  const m = /^[245]\.(\d{1,3})\.(\d{1,3})$/.exec(status)
  if (m === null) return undefined
  const subject = Number(m[1])
  const detail = Number(m[2])
  switch (subject) {
    case 7: return 'policy'
    case 6: return 'content'
    case 1:
      if (detail === 2 || detail === 10) return 'domain'
      if (detail === 7 || detail === 8) return 'other' // the sender's address, not the recipient's
      return detail === 0 ? undefined : 'mailbox'
    case 2:
      return detail === 1 ? 'mailbox' : detail === 2 ? 'mailbox_full' : detail === 3 ? 'size' : undefined
    case 3: return detail === 4 ? 'size' : undefined
    case 4: return detail === 4 ? 'domain' : undefined
    default: return undefined
  }
}

// Checked in this order: a policy block often also says "rejected" or names the recipient.
const TEXT_RULES: ReadonlyArray<[RegExp, BounceCategory]> = [
  [/\b(spam|block(ed|list)?|black ?list(ed)?|listed|policy|dmarc|reputation|spamhaus|rbl)\b/i, 'policy'],
  [/\b(virus|malware|infected|content rejected)\b/i, 'content'],
  [/\b(too (big|large)|message size|size limit|exceeds? (the )?(maximum )?(message )?size)\b/i, 'size'],
  [/\b(quota|mailbox (is )?full|over ?quota|insufficient (system )?storage)\b/i, 'mailbox_full'],
  [/\b(domain (not found|does not exist)|no mx|host (not found|unknown)|unrouteable|nxdomain)\b/i, 'domain'],
  [/\b(user unknown|unknown user|no such (user|mailbox|recipient)|does ?n[o']t exist|mailbox not found|invalid (recipient|mailbox)|recipient (unknown|not found)|account (is )?disabled|mailbox (is )?disabled)\b/i, 'mailbox']
]

/**
 * The category of a bounce from its reply code (`"550"`, or '' when there was no reply), its enhanced status
 * (the DSN's `Status`, or '' to read it from the text) and its text.
 */
export function bounceCategory (reply: { code: string, enhanced?: string, text: string }): BounceCategory {
  const status = reply.enhanced !== undefined && reply.enhanced !== '' ? reply.enhanced : enhancedStatus(reply.text)
  const byStatus = categoryOfStatus(status)
  if (byStatus !== undefined) return byStatus
  for (const [pattern, category] of TEXT_RULES) if (pattern.test(reply.text)) return category
  return reply.code === '552' ? 'size' : 'other'
}

/** Whether a hard bounce of this category puts the address on the suppression list. */
export function suppresses (category: BounceCategory): boolean {
  return category === 'mailbox' || category === 'domain'
}
