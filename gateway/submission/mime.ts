import mailsplit from '@zone-eu/mailsplit'
import libmime from 'libmime'
import addressparser from 'nodemailer/lib/addressparser/index.js'
import { MAX_METADATA_PAIRS, MAX_TAGS, bareAddress, isStreamId, isTag, spoofedDisplayAddress } from '../../protocol/mod.ts'
import { SmtpReply } from '../../stores/smtp_server/mod.ts'

/** A message whose content is refused as it stands: 554 5.6.0 (RFC 3463: media error), before the 250. */
export function contentRefused (text: string): SmtpReply {
  return new SmtpReply(554, text, { enhanced: '5.6.0' })
}

/** RFC 5322 §2.1.1: a line is at most 998 octets without its CRLF. */
export const MAX_LINE_OCTETS = 998
const HEADER_END = Buffer.from('\r\n\r\n')
/**
 * Bounds on what is parsed, so that parsing stays a small fraction of a message's cost (addresses are parsed a
 * character at a time, some 1 µs each): the header section, and each header read here.
 */
export const MAX_HEADER_SECTION_OCTETS = 256 * 1024
const MAX_PARSED_HEADER: Record<string, number> = {
  from: 2048, to: 64 * 1024, cc: 64 * 1024, subject: 8192, 'x-outbox-metadata': 32 * 1024, 'x-outbox-tags': 2048,
  'x-outbox-stream': 256
}
/**
 * Headers read and removed here, the ones the engine writes for each recipient (an application's copy would double
 * them), and Bcc: the blind copies are envelope recipients, and a Bcc header would show them to every recipient
 * (RFC 5322 3.6.3; Resent-Bcc likewise, 3.6.6).
 */
const REMOVED = ['x-outbox-metadata', 'x-outbox-tags', 'x-outbox-stream', 'list-unsubscribe', 'list-unsubscribe-post', 'bcc', 'resent-bcc']

/** What the submitted headers say, for the checks, the events and the read model. */
export interface SubmittedMessage {
  /** The message to send: CRLF line ends, the removed headers (Bcc among them) gone, Message-ID and Date added when missing. */
  mime: Buffer
  /** The From header as written (decoded), and its one address. */
  from: string
  fromAddress: string
  subject: string
  /** Bare addresses the To and Cc headers name (to sort the envelope recipients into to, cc and bcc). */
  to: Set<string>
  cc: Set<string>
  /** The application's Message-ID, when it wrote one (the key of the 24 h duplicate check). */
  messageId?: string
  metadata: Record<string, string>
  tags: string[]
  /** The message stream X-Outbox-Stream names; absent: the key's default stream. */
  stream?: string
}

/**
 * Bare LF becomes CRLF (the only change made to the submitted bytes); a bare CR, NUL or a line longer than 998
 * octets is refused, so nothing the engine passes on can end a line or the DATA of the next server differently.
 */
export function normaliseLineEnds (data: Buffer): Buffer {
  let lf = 0
  let lineStart = 0
  for (let i = 0; i < data.length; i++) {
    const b = data[i]!
    if (b === 0) throw contentRefused('Message contains a NUL octet; NUL is not allowed in mail')
    if (b === 0x0d && data[i + 1] !== 0x0a) throw contentRefused('Message contains a bare CR; line ends must be CRLF')
    if (b !== 0x0a) continue
    const end = i > 0 && data[i - 1] === 0x0d ? i - 1 : i
    if (end - lineStart > MAX_LINE_OCTETS) throw lineTooLong()
    if (end === i) lf++
    lineStart = i + 1
  }
  if (data.length - lineStart > MAX_LINE_OCTETS) throw lineTooLong()
  if (lf === 0) return data
  const out = Buffer.allocUnsafe(data.length + lf)
  let o = 0
  for (let i = 0; i < data.length; i++) {
    const b = data[i]!
    if (b === 0x0a && (i === 0 || data[i - 1] !== 0x0d)) out[o++] = 0x0d
    out[o++] = b
  }
  return out
}

function lineTooLong (): SmtpReply {
  return contentRefused(`Message has a line longer than ${MAX_LINE_OCTETS} octets (RFC 5322 2.1.1); ` +
    'encode long lines (quoted-printable or base64)')
}

/** The addresses of a header value, bare and lower-cased; groups are flattened. */
function addresses (values: string[]): string[] {
  return values.flatMap((v) => addressparser(v, { flatten: true }).map((a) => a.address.toLowerCase()).filter((a) => a !== ''))
}

/** Every value of a header, unfolded; one over its bound in MAX_PARSED_HEADER is refused before it is parsed. */
function headerValues (h: InstanceType<typeof mailsplit.Headers>, name: string): string[] {
  const max = MAX_PARSED_HEADER[name]
  return h.get(name).map((line) => {
    const value = line.slice(line.indexOf(':') + 1)
    if (max !== undefined && value.length > max) throw contentRefused(`The ${name} header is longer than ${max} characters`)
    return value.replace(/\r\n[ \t]*/g, ' ').trim()
  })
}

function headerValue (h: InstanceType<typeof mailsplit.Headers>, name: string): string | undefined {
  return headerValues(h, name)[0]
}

function parseMetadata (value: string | undefined): Record<string, string> {
  if (value === undefined) return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(libmime.decodeWords(value))
  } catch {
    throw contentRefused('X-Outbox-Metadata must be a JSON object (RFC 2047 encoded words are decoded first)')
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw contentRefused('X-Outbox-Metadata must be a JSON object')
  }
  const entries = Object.entries(parsed as Record<string, unknown>)
  // The limits of the HTTP send's `metadata`.
  if (entries.length > MAX_METADATA_PAIRS) throw contentRefused(`X-Outbox-Metadata may hold at most ${MAX_METADATA_PAIRS} keys`)
  const out: Record<string, string> = {}
  for (const [k, v] of entries) {
    if (typeof v !== 'string' || k.length < 1 || k.length > 40 || v.length > 500) {
      throw contentRefused('X-Outbox-Metadata keys must be 1 to 40 characters and values strings of at most 500')
    }
    out[k] = v
  }
  return out
}

function parseTags (value: string | undefined): string[] {
  if (value === undefined) return []
  const tags = libmime.decodeWords(value).split(',').map((t) => t.trim()).filter((t) => t !== '')
  if (tags.length > MAX_TAGS || !tags.every(isTag)) {
    throw contentRefused(`X-Outbox-Tags must be a comma list of at most ${MAX_TAGS} tags of A-Z a-z 0-9 _ - (1 to 64 characters)`)
  }
  return tags
}

/**
 * Reads a submitted message (already CRLF-normalised): From, Subject, To, Cc and Message-ID for the checks and the
 * record, X-Outbox-Metadata and X-Outbox-Tags into metadata and tags. Headers are parsed and rebuilt by mailsplit,
 * which keeps every untouched header line byte for byte; the body is not looked at.
 */
export function readSubmitted (data: Buffer, ids: { messageId: string, date: Date }): SubmittedMessage {
  const end = data.indexOf(HEADER_END)
  if ((end === -1 ? data.length : end) > MAX_HEADER_SECTION_OCTETS) {
    throw contentRefused(`The header section is longer than ${MAX_HEADER_SECTION_OCTETS} octets`)
  }
  const head = end === -1 ? data : data.subarray(0, end + 2)
  const body = end === -1 ? Buffer.alloc(0) : data.subarray(end + 4)
  const h = new mailsplit.Headers(head)
  const fromLines = h.get('from')
  if (fromLines.length === 0) throw contentRefused('Message has no From header')
  if (fromLines.length > 1) throw contentRefused('Message has more than one From header')
  const fromRaw = headerValue(h, 'from')!
  const fromList = addressparser(fromRaw, { flatten: true }).filter((a) => a.address !== '')
  if (fromList.length !== 1) throw contentRefused('The From header must hold exactly one address')
  const from = libmime.decodeWords(fromRaw)
  const fromAddress = bareAddress(fromList[0]!.address)
  const shown = spoofedDisplayAddress(`${libmime.decodeWords(fromList[0]!.name)} <${fromAddress}>`)
  if (shown !== undefined) {
    throw new SmtpReply(553, 'The From display name shows another address than the sender\'s; ' +
      'use a plain name or the sender\'s own address', { enhanced: '5.7.1' })
  }
  const metadata = parseMetadata(headerValue(h, 'x-outbox-metadata'))
  const tags = parseTags(headerValue(h, 'x-outbox-tags'))
  const streamHeader = headerValue(h, 'x-outbox-stream')?.trim()
  if (streamHeader !== undefined && !isStreamId(streamHeader)) {
    throw contentRefused('X-Outbox-Stream must be a stream id: 1 to 40 lower-case letters, digits and dashes')
  }
  const given = headerValue(h, 'message-id')
  let changed = false
  for (const name of REMOVED) {
    if (h.hasHeader(name)) { h.remove(name); changed = true }
  }
  // RFC 6409 §8.2, 8.3: a submission server may add a missing Message-ID and Date.
  if (given === undefined || given === '') { h.add('Message-ID', ids.messageId); changed = true }
  if (!h.hasHeader('date')) { h.add('Date', ids.date.toUTCString().replace('GMT', '+0000')); changed = true }
  const rebuilt = changed ? h.build() : undefined
  return {
    mime: rebuilt === undefined ? data : Buffer.concat([rebuilt, body]),
    from,
    fromAddress,
    subject: libmime.decodeWords(headerValue(h, 'subject') ?? ''),
    to: new Set(addresses(headerValues(h, 'to'))),
    cc: new Set(addresses(headerValues(h, 'cc'))),
    ...(given !== undefined && given !== '' ? { messageId: given } : {}),
    metadata,
    tags,
    ...(streamHeader !== undefined ? { stream: streamHeader } : {})
  }
}
