/**
 * The one table of SMTP replies that say something about a SOURCE (the sending address) rather than about a
 * recipient or a message, and what the lane does about it. Every other reply (a greylisting deferral, a full
 * mailbox, an authentication failure, a per-recipient rate) stays what it is today: the recipient's own retry or
 * bounce. A rule matches a reply, never a count of them: the state module acts on each matching reply, and a slowed
 * lane climbs back by itself (docs/egress.md).
 *
 * Matching, first rule that matches wins:
 * - `provider`: the rule applies only to that provider's lanes; a rule without one (generic) to any lane.
 * - `code`: the reply's basic code must equal it. A rule without `code` matches transient replies (4xx) only:
 *   acting on the source for a permanent reply needs a rule that names its code.
 * - `enhanced`: the enhanced status code (RFC 3463) must equal it, or fall in its range (`4.7.500-699`).
 * - `text`: tested on the reply's text with the code prefixes of a multi-line reply taken out and its lines joined by
 *   one space, so a phrase broken over two lines ("temporarily\n421-4.7.28 rate limited") still matches.
 * - Generic rules never match a reply about the recipient (enhanced X.1.x, X.2.x; or a recipient's, mailbox's or
 *   user's rate) or about authentication (enhanced X.7.20 to X.7.27, X.7.29 to X.7.32; or the words SPF, DKIM, DMARC,
 *   authenticat…): slowing a shared source for one recipient or for one sender's DNS records would punish every
 *   other sender on it.
 */
export type ReplyAction =
  /** Halve this source's message rate to that provider (it recovers gradually). */
  | { kind: 'slow' }
  /** No mail from this source to that provider for `ms`. */
  | { kind: 'pause', ms: number }
  /** Take this source out of its pool for that provider for `ms`: the pool's other sources carry its mail. */
  | { kind: 'out', ms: number }

export interface ReplyRule {
  /** Stable id: the state module records it as the throttle's reason, and operators see it. */
  id: string
  provider?: string
  code?: number
  /** Exact (`4.7.28`) or a range of the last number (`4.7.500-699`). */
  enhanced?: string
  text?: RegExp
  action: ReplyAction
  /** What the provider means by this reply, and where it says so. */
  about: string
}

const MINUTE_MS = 60_000
const HOUR_MS = 60 * MINUTE_MS
const SLOW: ReplyAction = { kind: 'slow' }
/**
 * 4 h out for a source a provider says it blocks: long enough not to knock on a closed door all day, short enough
 * to notice a delisting the same day. KumoMTA's longest suspension for a block (Yahoo TSS05, Apple Spamhaus DBL).
 */
const BLOCKED: ReplyAction = { kind: 'out', ms: 4 * HOUR_MS }

/** Gmail's 4.7.28 and 4.7.0 rate limits also come per SPF, DKIM or URL domain: those are one sender's, not the source's. */
const NOT_ABOUT_A_DOMAIN = /^(?![\s\S]*\b(?:SPF|DKIM|URL) domain)/i

export const REPLY_RULES: readonly ReplyRule[] = frozen([
  // Google: https://support.google.com/a/answer/3726730 (Gmail SMTP errors and codes),
  // https://support.google.com/mail/answer/81126 (email sender guidelines)
  {
    id: 'google-ip-rate-limited',
    provider: 'google',
    code: 421,
    enhanced: '4.7.28',
    text: NOT_ABOUT_A_DOMAIN,
    action: SLOW,
    about: 'Gmail: "an unusual rate of unsolicited mail originating from your IP address … has been temporarily rate ' +
      'limited". The same code about an SPF, DKIM or URL domain is one sender\'s and does not match. ' +
      'Source: support.google.com/a/answer/3726730'
  },
  {
    id: 'google-unusual-rate',
    provider: 'google',
    code: 421,
    enhanced: '4.7.0',
    text: /^(?![\s\S]*\b(?:SPF|DKIM|URL) domain)[\s\S]*\b(?:unusual rate|temporarily rate limited)\b/i,
    action: SLOW,
    about: 'Gmail, older wording of 4.7.28: "Our system has detected an unusual rate of unsolicited mail originating ' +
      'from your IP address … temporarily rate limited". Source: support.google.com/a/answer/3726730'
  },
  {
    id: 'google-ip-reputation',
    provider: 'google',
    code: 421,
    enhanced: '4.7.0',
    text: /\blow reputation of the sending IP\b/i,
    action: SLOW,
    about: 'Gmail: "this message is suspicious due to the very low reputation of the sending IP address"; more mail ' +
      'from the address now only lowers it further. Source: support.google.com/a/answer/3726730'
  },
  {
    id: 'google-ip-blocked',
    provider: 'google',
    code: 550,
    enhanced: '5.7.1',
    text: /\bunusual rate of unsolicited mail originating from your IP address\b/i,
    action: BLOCKED,
    about: 'Gmail: "mail sent from your IP address has been blocked" after an unusual rate of unsolicited mail. ' +
      'Source: support.google.com/a/answer/3726730'
  },
  // Microsoft: https://learn.microsoft.com/troubleshoot/exchange/email-delivery/ndr/fix-error-code-451-4-7-500-699-asxxx-in-exchange-online
  // (4.7.500-699), https://sendersupport.olc.protection.outlook.com/pm/troubleshooting (Outlook.com codes)
  {
    id: 'microsoft-ip-reputation-rate',
    provider: 'microsoft',
    code: 451,
    enhanced: '4.7.650',
    action: { kind: 'pause', ms: 30 * MINUTE_MS },
    about: 'Microsoft: "The mail server [IP] has been temporarily rate limited due to IP reputation" (S775). ' +
      'KumoMTA\'s community rules suspend for 30 minutes. Source: postmaster.live.com, KumoMTA community shaping.toml'
  },
  {
    id: 'microsoft-server-busy',
    provider: 'microsoft',
    code: 451,
    enhanced: '4.7.500-699',
    action: SLOW,
    about: 'Microsoft 365: "Server busy. Please try again later from [IP]. (ASxxx)": the address "changed its previous ' +
      'sending patterns"; it resolves "as you slowly ramp up your email traffic". Source: learn.microsoft.com, ' +
      'fix error code 451 4.7.500-699 (ASxxx) in Exchange Online'
  },
  {
    id: 'microsoft-consumer-rate',
    provider: 'microsoft',
    code: 421,
    text: /\bRP-00[1-3]\b/,
    action: SLOW,
    about: 'Outlook.com: "421 RP-001 … some messages from [IP] weren\'t sent. Please try again. We have limits for how ' +
      'many messages can be sent per hour and per day". Source: sendersupport.olc.protection.outlook.com'
  },
  {
    id: 'microsoft-block-list',
    provider: 'microsoft',
    code: 550,
    text: /\((?:S3150|S3140)\)|\bpart of their network is on our block list\b/i,
    action: BLOCKED,
    about: 'Outlook.com: "550 5.7.1 Unfortunately, messages from [IP] weren\'t sent. Please contact your Internet ' +
      'service provider since part of their network is on our block list (S3150)" (S3140 likewise): the address is ' +
      'blocked until delisted. Source: sendersupport.olc.protection.outlook.com'
  },
  {
    id: 'microsoft-banned-ip',
    provider: 'microsoft',
    code: 550,
    enhanced: '5.7.606-649',
    action: BLOCKED,
    about: 'Microsoft 365: "550 5.7.606-649 Access denied, banned sending IP [IP]": removal is requested at ' +
      'sender.office.com. Source: learn.microsoft.com, fix error code 550 5.7.606-649 in Exchange Online'
  },
  // Yahoo and AOL: https://senders.yahooinc.com/smtp-error-codes/; KumoMTA policy-extras shaping.toml ("PROVIDED BY
  // YAHOO! DIRECTLY") and community shaping.toml
  {
    id: 'yahoo-deferred',
    provider: 'yahoo',
    text: /\[(?:TSS?0[12]|IPTS0[12])\]/,
    action: SLOW,
    about: 'Yahoo: "[TSS01]/[TSS02] Messages from [IP] temporarily deferred due to user complaints" or unverified ' +
      'sending: send less from this address. Source: senders.yahooinc.com/smtp-error-codes'
  },
  {
    id: 'yahoo-volume-or-complaints',
    provider: 'yahoo',
    text: /\[(?:TSS?04|IPTS04)\]/,
    action: { kind: 'pause', ms: 2 * HOUR_MS },
    about: 'Yahoo: "421 4.7.0 [TSS04] Messages from [IP] temporarily deferred due to unexpected volume or user ' +
      'complaints". Yahoo\'s own rule in KumoMTA\'s shaping.toml suspends for 2 hours. Source: senders.yahooinc.com'
  },
  {
    id: 'yahoo-volume-or-complaints-long',
    provider: 'yahoo',
    text: /\[(?:TSS?05|IPTS05)\]/,
    action: { kind: 'pause', ms: 4 * HOUR_MS },
    about: 'Yahoo: "[TSS05] Messages from [IP] temporarily deferred due to user complaints", the longer deferral; ' +
      'KumoMTA\'s community rules suspend for 4 hours. Source: senders.yahooinc.com'
  },
  {
    id: 'yahoo-permanently-deferred',
    provider: 'yahoo',
    text: /\[TS03\]|\bwill be permanently deferred\b/i,
    action: BLOCKED,
    about: 'Yahoo: "421 4.7.1 [TS03] All messages from [IP] will be permanently deferred; Retrying will NOT succeed". ' +
      'Source: senders.yahooinc.com/smtp-error-codes'
  },
  {
    id: 'yahoo-blocked',
    provider: 'yahoo',
    code: 553,
    text: /\[(?:TSS09|BL\d\d)\]/,
    action: BLOCKED,
    about: 'Yahoo: "553 5.7.2 [TSS09] All messages from [IP] will be permanently deferred" and "553 5.7.1 [BL21] ' +
      'Connections will not be accepted from [IP], because the ip is in Spamhaus\'s list". Source: senders.yahooinc.com'
  },
  // Orange: https://postmaster.orange.fr, KumoMTA community shaping.toml
  {
    id: 'orange-too-many-connections',
    provider: 'orange',
    text: /\btrop de connexions\b/i,
    action: SLOW,
    about: 'Orange: "421 … Trop de connexions" (too many connections from this address). Source: KumoMTA community ' +
      'shaping.toml, postmaster.orange.fr'
  },
  // Any provider or site: transient replies that name a limit of the sending side (RFC 5321 §4.2.1: 421 "closing
  // transmission channel", 451/452 "local error"/"insufficient storage" in processing)
  {
    id: 'too-many-connections',
    text: /\btoo many (?:concurrent |simultaneous |open |parallel )?(?:connections|sessions)\b|\bmaximum number of (?:concurrent )?connections\b|\bconnection (?:rate )?limit (?:exceeded|reached)\b/i,
    action: SLOW,
    about: 'Any receiver: a 4xx saying this address has too many connections open (Postfix\'s "421 4.7.0 Error: too ' +
      'many connections from [IP]", Exchange\'s "maximum number of connections"). Fewer messages per minute means ' +
      'fewer connections needed.'
  },
  {
    id: 'rate-limited',
    text: /\brate[- ]?limit(?:ed|ing|s)?\b|\btoo many (?:messages|mails|emails)\b|\bsending rate\b|\btemporarily throttled\b/i,
    action: SLOW,
    about: 'Any receiver: a 4xx saying this address sends too fast ("rate limited", "too many messages"). A ' +
      'per-recipient rate (enhanced X.2.x, Gmail\'s 450 4.2.1) does not match.'
  }
])

/** Rules and their actions are shared by every lane: nothing may change them. */
function frozen (rules: ReplyRule[]): readonly ReplyRule[] {
  return Object.freeze(rules.map((rule) => Object.freeze({ ...rule, action: Object.freeze({ ...rule.action }) })))
}

const RECIPIENT_SUBJECTS = new Set([1, 2]) // RFC 3463: X.1.x addressing, X.2.x mailbox status
const AUTH_DETAILS = new Set([20, 21, 22, 23, 24, 25, 26, 27, 29, 30, 31, 32]) // X.7.20-25 RFC 7372 (DKIM, SPF, rDNS), Gmail 26-32 but 28
const AUTH_WORDS = /\b(?:SPF|DKIM|DMARC|unauthenticated|authenticat\w*)\b/i
/** A limit of one recipient's ("recipient rate limited", Gmail's "receiving mail at a rate"), not of the sender. */
const RECIPIENT_LIMIT = /\b(?:recipient|mailbox|user)\b[^.;]{0,40}?\b(?:rate|too many)\b|\breceiving mail at a rate\b/i

interface ParsedReply { code?: number, enhanced?: string, text: string }

/**
 * Basic code and enhanced status of the first line; the text of all lines without their code prefixes. A reply
 * whose lines were already folded into one (`… temporarily 421-4.7.28 rate limited …`, as a log or a collapsed
 * `response` has it) loses its inner prefixes too, when they repeat the first line's code and enhanced status.
 */
function parseReply (reply: string): ParsedReply {
  const lines = reply.replace(/^\s*smtp;\s*/i, '').split(/\r?\n/)
  const first = /^\s*([2-5]\d\d)(?:[ -]|$)\s*(?:([245]\.\d{1,3}\.\d{1,3})(?![\d.]))?/.exec(lines[0] ?? '')
  const text = lines
    .map((line) => line.replace(/^\s*[2-5]\d\d(?:[ -]|$)\s*(?:[245]\.\d{1,3}\.\d{1,3}(?![\d.]))?/, '').trim())
    .filter((line) => line !== '')
    .join(' ')
  const out: ParsedReply = { text }
  if (first?.[1] !== undefined) out.code = Number(first[1])
  if (first?.[2] !== undefined) {
    out.enhanced = first[2]
    const inner = new RegExp(`\\s${first[1]}[ -]${first[2].replaceAll('.', '\\.')}(?=\\s|$)`, 'g')
    out.text = text.replace(inner, '')
  }
  return out
}

function enhancedMatches (pattern: string, enhanced: string | undefined): boolean {
  if (enhanced === undefined) return false
  const range = /^(\d\.\d{1,3}\.)(\d{1,3})-(\d{1,3})$/.exec(pattern)
  if (range === null) return pattern === enhanced
  if (!enhanced.startsWith(range[1])) return false
  const detail = Number(enhanced.slice(range[1].length))
  return detail >= Number(range[2]) && detail <= Number(range[3])
}

/** Whether a reply is about a recipient or about authentication, which no generic rule may read as the source's. */
function notAboutTheSource (reply: ParsedReply): boolean {
  if (AUTH_WORDS.test(reply.text) || RECIPIENT_LIMIT.test(reply.text)) return true
  const m = /^\d\.(\d{1,3})\.(\d{1,3})$/.exec(reply.enhanced ?? '')
  if (m === null) return false
  const subject = Number(m[1])
  return RECIPIENT_SUBJECTS.has(subject) || (subject === 7 && AUTH_DETAILS.has(Number(m[2])))
}

function matches (rule: ReplyRule, provider: string, reply: ParsedReply): boolean {
  if (rule.provider !== undefined && rule.provider !== provider) return false
  if (rule.code !== undefined ? reply.code !== rule.code : reply.code === undefined || reply.code < 400 || reply.code > 499) {
    return false
  }
  if (rule.enhanced !== undefined && !enhancedMatches(rule.enhanced, reply.enhanced)) return false
  if (rule.provider === undefined && notAboutTheSource(reply)) return false
  return rule.text === undefined || rule.text.test(reply.text)
}

/**
 * The action a reply calls for on the lane (source × `provider`) it came over, with the id of the rule that said so,
 * or undefined when the reply is not about the source. `reply` is the whole reply as nodemailer reports it
 * (`421-4.7.28 [1.2.3.4] Our system …\n421 4.7.28 …`), a leading `smtp;` allowed.
 */
export function replyAction (provider: string, reply: string): { rule: string, action: ReplyAction } | undefined {
  const parsed = parseReply(reply)
  for (const rule of REPLY_RULES) {
    if (matches(rule, provider, parsed)) return { rule: rule.id, action: rule.action }
  }
  return undefined
}
