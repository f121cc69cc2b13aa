import { simpleParser, type ParsedMail } from 'mailparser'

/**
 * Delivery status notifications (RFC 3464) and abuse feedback reports (ARF, RFC 5965). mailparser gives us the
 * parts (with `keepDeliveryStatus`); the machine-readable part is a list of header-style field groups, read here.
 */
export type Report =
  | { kind: 'dsn', recipients: DsnRecipient[], originalMessageId?: string, originalReturnPaths?: string[] }
  | {
    kind: 'arf'
    feedbackType: string
    originalRecipient?: string
    originalMessageId?: string
    originalTo?: string
    originalReturnPaths?: string[]
  }

export interface DsnRecipient {
  /** Final-Recipient, then Original-Recipient when given (forwarding may have rewritten the final one). */
  addresses: string[]
  action: string
  /** Enhanced status code, e.g. 5.1.1 */
  status: string
  diagnostic: string
}

/** Field groups of a `message/delivery-status` or `message/feedback-report` body: lower-cased names. */
export function parseFieldGroups (body: string): Array<Map<string, string>> {
  const groups: Array<Map<string, string>> = []
  let current = new Map<string, string>()
  let last: string | undefined
  for (const line of body.split(/\r?\n/)) {
    if (line.trim() === '') {
      if (current.size > 0) groups.push(current)
      current = new Map()
      last = undefined
    } else if (/^[ \t]/.test(line) && last !== undefined) {
      current.set(last, `${current.get(last)!} ${line.trim()}`) // folded continuation line
    } else {
      const colon = line.indexOf(':')
      if (colon <= 0) continue
      last = line.slice(0, colon).trim().toLowerCase()
      // Repeated fields (ARF Original-Rcpt-To may repeat): keep the first.
      if (!current.has(last)) current.set(last, line.slice(colon + 1).trim())
    }
  }
  if (current.size > 0) groups.push(current)
  return groups
}

/** `rfc822; bob@example.com` → `bob@example.com` */
function addressField (v: string | undefined): string | undefined {
  if (v === undefined) return undefined
  const a = v.includes(';') ? v.slice(v.indexOf(';') + 1) : v
  const t = a.trim().replace(/^<|>$/g, '')
  return t === '' ? undefined : t.toLowerCase()
}

/** Addresses a report's copy of the original may carry the recipient's return path in, at most this many read. */
const MAX_RETURN_PATHS = 8

/**
 * The addresses in the original's `Return-Path` (added where it was delivered) and in the `mailto:` of its
 * `List-Unsubscribe` (Outbox writes one per recipient, DKIM-signed): either is the VERP address issued for the
 * recipient who got that copy, which report_checks.ts verifies.
 */
function returnPaths (lines: ReadonlyArray<{ key: string, line: string }>): string[] {
  const out: string[] = []
  for (const { key, line } of lines) {
    if (key !== 'return-path' && key !== 'list-unsubscribe') continue
    const value = line.slice(line.indexOf(':') + 1)
    const found = key === 'return-path' ? /<([^<>\s]+@[^<>\s]+)>/g : /<mailto:([^<>?\s]+@[^<>?\s]+)(?:\?[^<>]*)?>/gi
    for (const m of value.matchAll(found)) if (out.length < MAX_RETURN_PATHS) out.push(m[1]!)
  }
  return out
}

async function originalMessage (parsed: ParsedMail): Promise<{ messageId?: string, to?: string, returnPaths?: string[] }> {
  const part = parsed.attachments.find((a) => a.contentType === 'message/rfc822' || a.contentType === 'text/rfc822-headers')
  if (part === undefined) return {}
  const original = await simpleParser(part.content, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true })
  const to = original.to === undefined
    ? undefined
    : (Array.isArray(original.to) ? original.to : [original.to]).flatMap((t) => t.value)[0]?.address
  const paths = returnPaths(original.headerLines)
  return {
    ...(original.messageId !== undefined ? { messageId: original.messageId } : {}),
    ...(to !== undefined ? { to: to.toLowerCase() } : {}),
    ...(paths.length > 0 ? { returnPaths: paths } : {})
  }
}

/** The report a parsed message carries, or undefined when it is ordinary mail. */
export async function readReport (parsed: ParsedMail): Promise<Report | undefined> {
  const ct = parsed.headers.get('content-type') as { value?: string, params?: Record<string, string> } | undefined
  if (ct?.value?.toLowerCase() !== 'multipart/report') return undefined
  const type = ct.params?.['report-type']?.toLowerCase()
  const original = await originalMessage(parsed)
  if (type === 'delivery-status') {
    const part = parsed.attachments.find((a) => a.contentType === 'message/delivery-status')
    if (part === undefined) return undefined
    const groups = parseFieldGroups(part.content.toString('utf8'))
    const recipients: DsnRecipient[] = []
    // The first group describes the reporting MTA; each later one is a recipient.
    for (const g of groups.slice(1)) {
      const addresses = [addressField(g.get('final-recipient')), addressField(g.get('original-recipient'))].filter((a) => a !== undefined)
      if (addresses.length === 0) continue
      recipients.push({
        addresses,
        action: (g.get('action') ?? '').toLowerCase(),
        status: /\d\.\d{1,3}\.\d{1,3}/.exec(g.get('status') ?? '')?.[0] ?? '',
        diagnostic: g.get('diagnostic-code') ?? ''
      })
    }
    return {
      kind: 'dsn',
      recipients,
      ...(original.messageId !== undefined ? { originalMessageId: original.messageId } : {}),
      ...(original.returnPaths !== undefined ? { originalReturnPaths: original.returnPaths } : {})
    }
  }
  if (type === 'feedback-report') {
    const part = parsed.attachments.find((a) => a.contentType === 'message/feedback-report')
    if (part === undefined) return undefined
    const fields = parseFieldGroups(part.content.toString('utf8'))[0] ?? new Map<string, string>()
    const rcpt = addressField(fields.get('original-rcpt-to'))
    return {
      kind: 'arf',
      feedbackType: (fields.get('feedback-type') ?? 'abuse').toLowerCase(),
      ...(rcpt !== undefined ? { originalRecipient: rcpt } : {}),
      ...(original.messageId !== undefined ? { originalMessageId: original.messageId } : {}),
      ...(original.to !== undefined ? { originalTo: original.to } : {}),
      ...(original.returnPaths !== undefined ? { originalReturnPaths: original.returnPaths } : {})
    }
  }
  return undefined
}

/** Outbox's own Message-ID shape, `<msg_…@domain>`: the message id and the sending domain. */
export function ownMessageId (messageIdHeader: string | undefined): { messageId: string, domain: string } | undefined {
  const m = /^<?(msg_[0-9a-z]{26})@([^>\s]+)>?$/i.exec(messageIdHeader?.trim() ?? '')
  return m === null ? undefined : { messageId: m[1]!.toLowerCase(), domain: m[2]!.toLowerCase() }
}

/** `bounce_code` for a DSN recipient: the SMTP reply code of the diagnostic when present, else the status. */
export function bounceCode (r: DsnRecipient): string {
  return /^\s*smtp\s*;\s*(\d{3})\b/i.exec(r.diagnostic)?.[1] ?? r.status
}
