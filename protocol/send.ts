import { Type, type Static } from 'typebox'
import { StreamId } from './message_streams.ts'

/**
 * The send request (POST /v1/messages/send and each item of /batch) and the queued message the gateway
 * publishes to JetStream. Both sides compile these once.
 */

export const MAX_RECIPIENTS = 50
export const MAX_BATCH = 100
export const MAX_METADATA_PAIRS = 20
export const MAX_SCHEDULE_AHEAD_MS = 72 * 3600_000 // 72 h

// `addr@domain` or `Display Name <addr@domain>`; CR, LF and NUL are refused by the pattern itself.
// A bare display name may not hold `,` `;` `:` `@` `"` `<` `>`: a mail composer would read
// `evil@other.com, <me@mine.com>` as two addresses and slip a second sender or recipient past the checks.
// Names that need those characters go in double quotes: `"Acme, Inc." <me@mine.com>`.
const ADDR = "[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@" +
  '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+'
const DISPLAY_NAME = '(?:[^\\r\\n\\0<>,;:@"\\\\]{0,200}|"[^\\r\\n\\0"\\\\<>]{0,200}" ?)'
export const ADDRESS_PATTERN = `^(?:${ADDR}|${DISPLAY_NAME}<${ADDR}>)$`
const NO_CRLF = '^[^\\r\\n\\0]*$'
/** Base64 as MIME writes it: line breaks anywhere in the body, at most two `=` at the end, then line breaks. */
export const BASE64_PATTERN = '^[A-Za-z0-9+/\\r\\n]*(?:={1,2}[\\r\\n]*)?$'
const ADDRESS_MESSAGE = 'must be addr@domain or "Display Name <addr@domain>" (no CR, LF or NUL; quote a name that holds , ; : @)'
const NO_CRLF_MESSAGE = 'must not contain CR, LF or NUL'

export const Address = Type.String({
  pattern: ADDRESS_PATTERN, maxLength: 320, description: 'addr@domain or "Display Name <addr@domain>"', errorMessage: ADDRESS_MESSAGE
})
const Addresses = Type.Union([Address, Type.Array(Address, { minItems: 1, maxItems: MAX_RECIPIENTS })], {
  errorMessage: `must be an address or an array of 1 to ${MAX_RECIPIENTS} addresses`
})

/** A Content-ID without its angle brackets: printable ASCII, no `<`, `>` or whitespace, so it cannot break the header. */
export const CONTENT_ID_PATTERN = '^[!-;=?-~]{1,250}$'

export const Attachment = Type.Object({
  filename: Type.String({ minLength: 1, maxLength: 255, pattern: NO_CRLF, errorMessage: NO_CRLF_MESSAGE }),
  // Trailing line breaks are a quantifier of their own only after `=` padding (before it the body's class takes
  // them), so no two quantifiers compete for one run of line breaks and the match takes one pass; the earlier
  // `…[\r\n]*={0,2}[\r\n]*$` took quadratic time on a run of line breaks followed by a bad character.
  content: Type.String({ description: 'base64', pattern: BASE64_PATTERN, errorMessage: 'must be base64' }),
  content_type: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+$', maxLength: 127 })),
  content_id: Type.Optional(Type.String({
    pattern: CONTENT_ID_PATTERN,
    description: 'Sends the attachment inline (Content-Disposition: inline, Content-ID: <content_id>) next to the HTML, ' +
      'which shows it with src="cid:<content_id>"; unique within the message',
    errorMessage: 'must be 1 to 250 characters without <, >, whitespace or control characters'
  }))
}, { additionalProperties: false })

export const Subject = Type.String({ maxLength: 998, pattern: NO_CRLF, errorMessage: NO_CRLF_MESSAGE })
export const Headers = Type.Record(
  Type.String({ pattern: '^[A-Za-z0-9-]{1,76}$' }),
  Type.String({ maxLength: 998, pattern: NO_CRLF, errorMessage: NO_CRLF_MESSAGE }),
  // Without this a name outside the key pattern (`Bad Name`, `X:Y`) would pass unchecked.
  { maxProperties: 50, additionalProperties: false }
)
export const Metadata = Type.Record(Type.String({ minLength: 1, maxLength: 40 }), Type.String({ maxLength: 500 }), {
  maxProperties: MAX_METADATA_PAIRS
})
export const Variables = Type.Record(Type.String({ maxLength: 100 }), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
  maxProperties: 100
})
export const TemplateId = Type.String({ pattern: '^tpl_[0-9a-z]{26}$' })

export const MAX_TAGS = 10
export const TAG_PATTERN = '^[A-Za-z0-9_-]{1,64}$'
/** A tag: a label the caller filters messages, events and statistics by. Tags name Redis keys, hence the tight set. */
export const Tag = Type.String({
  pattern: TAG_PATTERN,
  maxLength: 64,
  description: '1 to 64 of A-Z a-z 0-9 _ -',
  errorMessage: 'must be 1 to 64 characters of A-Z a-z 0-9 _ -'
})
export const Tags = Type.Array(Tag, {
  maxItems: MAX_TAGS,
  description: `at most ${MAX_TAGS} tags, echoed in every event's data.tags`,
  errorMessage: `must be an array of at most ${MAX_TAGS} tags`
})
const TAG_RE = new RegExp(TAG_PATTERN)

/** Whether `value` is a tag (the read routes check `?tag=` with the schema; this is for values read back from events). */
export function isTag (value: unknown): value is string {
  return typeof value === 'string' && TAG_RE.test(value)
}

/** The tags once each, in the order given (a repeated tag would index and count a message twice). */
export function uniqueTags (tags: readonly string[] | undefined): string[] {
  return tags === undefined ? [] : [...new Set(tags)]
}

export const SendRequest = Type.Object({
  from: Address,
  to: Addresses,
  cc: Type.Optional(Addresses),
  bcc: Type.Optional(Addresses),
  reply_to: Type.Optional(Address),
  subject: Type.Optional(Subject),
  html: Type.Optional(Type.String()),
  text: Type.Optional(Type.String()),
  headers: Type.Optional(Headers),
  metadata: Type.Optional(Metadata),
  attachments: Type.Optional(Type.Array(Attachment, { maxItems: 20 })),
  template_id: Type.Optional(TemplateId),
  variables: Type.Optional(Variables),
  allow_missing_variables: Type.Optional(Type.Boolean({
    description: 'Only with template_id: render placeholders the variables do not give as blanks instead of refusing the send (422)'
  })),
  scheduled_at: Type.Optional(Type.String({
    format: 'date-time', errorMessage: 'must be an ISO 8601 date-time such as 2026-01-31T09:00:00Z'
  })),
  track_opens: Type.Optional(Type.Boolean({ default: true })),
  track_clicks: Type.Optional(Type.Boolean({ default: true })),
  tags: Type.Optional(Tags),
  stream: Type.Optional(StreamId)
}, { additionalProperties: false })
export type SendRequest = Static<typeof SendRequest>

export const BatchRequest = Type.Object({
  messages: Type.Array(SendRequest, { minItems: 1, maxItems: MAX_BATCH })
}, { additionalProperties: false })
export type BatchRequest = Static<typeof BatchRequest>

/**
 * Header names a caller may not set through `headers` (compared lower-cased): those the engine writes, and those
 * that speak for a server the message passes through (trace and authentication results written by receivers,
 * resending), which a receiver or its user could take as that server's word. `Content-Disposition` at the top
 * level would turn the whole message into an attachment.
 */
export const RESERVED_HEADERS = new Set([
  'from', 'to', 'cc', 'bcc', 'reply-to', 'subject', 'message-id', 'date', 'return-path', 'sender',
  'dkim-signature', 'mime-version', 'content-type', 'content-transfer-encoding', 'content-disposition',
  'list-unsubscribe', 'list-unsubscribe-post', 'received', 'received-spf', 'authentication-results'
])
/** Whole families of reserved names: ARC sets (`ARC-Seal`, `ARC-Message-Signature`, ...) and `Resent-*` blocks. */
const RESERVED_HEADER_PREFIXES = ['arc-', 'resent-']

export function isReservedHeader (name: string): boolean {
  const lower = name.toLowerCase()
  return RESERVED_HEADERS.has(lower) || RESERVED_HEADER_PREFIXES.some((p) => lower.startsWith(p))
}

/** The bare address of `Name <addr@domain>` or `addr@domain`, lower-cased. */
export function bareAddress (value: string): string {
  const lt = value.lastIndexOf('<')
  const addr = lt === -1 ? value : value.slice(lt + 1, value.lastIndexOf('>'))
  return addr.trim().toLowerCase()
}

/** Something shaped like an address inside a display name; names are at most 200 characters (ADDRESS_PATTERN). */
const SHOWN_ADDRESS = /[^\s"'<>()[\]{},;:@]+@[^\s"'<>()[\]{},;:@]+/g

/**
 * An address the display name of `value` shows that is not its real address (`"ceo@bank.test" <me@mine.test>`:
 * most mail clients show only the name), or undefined. The name is NFKC-normalised first, so look-alikes of `@`
 * (full-width `＠`, small `﹫`) count as `@`. The real address itself in the name is fine.
 */
export function spoofedDisplayAddress (value: string): string | undefined {
  const lt = value.lastIndexOf('<')
  if (lt === -1) return undefined
  const name = value.slice(0, lt).normalize('NFKC')
  if (!name.includes('@')) return undefined
  const real = bareAddress(value)
  for (const m of name.matchAll(SHOWN_ADDRESS)) {
    if (m[0].toLowerCase().replace(/\.+$/, '') !== real) return m[0]
  }
  return undefined
}

export function addressDomain (value: string): string {
  const addr = bareAddress(value)
  return addr.slice(addr.lastIndexOf('@') + 1)
}
