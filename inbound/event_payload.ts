import type { InboundJob, InboundReceivedData, RouteRecord } from '../protocol/mod.ts'
import type { MessageAnalysis } from './analysis.ts'

/**
 * An upper bound of the UTF-8 size of `JSON.stringify(value)` for plain JSON data, found without serialising: no
 * UTF-16 unit of a string takes more than 6 bytes (`\uXXXX`), no number more than 24. Nearly every message is far
 * under the event size limit, and this tells so for a fraction of what serialising the payload costs.
 */
export function jsonSizeBound (value: unknown): number {
  if (typeof value === 'string') return 6 * value.length + 2
  if (typeof value === 'number') return 24
  if (value === null || typeof value !== 'object') return 5
  let n = 2
  if (Array.isArray(value)) {
    for (const v of value) n += jsonSizeBound(v) + 1
    return n
  }
  for (const k in value) n += 6 * k.length + 4 + jsonSizeBound((value as Record<string, unknown>)[k])
  return n
}

/** The path (under the API's base URL) that serves a message kept for its organisation. */
export function rawPath (messageId: string): string {
  return `/v1/inbound/messages/${messageId}/raw`
}

/** Room in the budget for `truncated` and `raw`, which are added once something was left out. */
const REFERENCE_BYTES = 160
/** A header value is cut to this many characters once the event is over its size (RFC 5322's line limit). */
const HEADER_VALUE_CHARS = 998

const size = (data: InboundReceivedData): number => Buffer.byteLength(JSON.stringify(data))

/** `s` without its last `over` UTF-16 units, never ending inside a surrogate pair. */
function cut (s: string, over: number): string {
  let end = Math.max(0, s.length - over)
  if (end > 0 && end < s.length) {
    const c = s.charCodeAt(end - 1)
    if (c >= 0xd800 && c <= 0xdbff) end--
  }
  return s.slice(0, end)
}

/**
 * The `inbound.received` payload for one route, at most `maxBytes` of JSON. A message over it is cut, in this order
 * and each only while still over: attachment contents are left out (`content_omitted: true` where the route asked for
 * them), then `html` and `text` become excerpts (their beginnings), then header values are cut to 998 characters and
 * the last headers left out, then the last attachments' entries, then `subject`, `from` and the last of `to`. Whenever
 * anything was left out the event says `truncated: true` (unless only contents were left out) and carries
 * `raw: {url, size}`, where its organisation reads the whole message; `cut` is then true.
 */
export function inboundPayload (
  m: MessageAnalysis, job: InboundJob, route: RouteRecord, to: string[], maxBytes: number
): { data: InboundReceivedData, cut: boolean } {
  const include = route.action.include_attachments
  type Attachment = MessageAnalysis['attachments'][number]
  const attachments: Attachment[] = m.attachments.map(({ content, ...rest }) =>
    include && content !== undefined ? { ...rest, content } : rest)
  const data: InboundReceivedData = {
    message_id: job.id,
    route_id: route.id,
    from: m.from,
    to,
    subject: m.subject,
    text: m.text,
    html: m.html,
    headers: m.headers,
    authentication: m.authentication,
    spam_score: m.spamScore,
    content_analysis: m.contentAnalysis,
    attachments,
    received_at: job.received_at
  }
  if (jsonSizeBound(data) <= maxBytes || size(data) <= maxBytes) return { data, cut: false }
  const budget = maxBytes - REFERENCE_BYTES
  data.raw = { url: rawPath(job.id), size: job.size }
  data.attachments = attachments.map(({ content: _c, ...rest }) => ({ ...rest, ...(include ? { content_omitted: true } : {}) }))
  let over = size(data) - budget
  if (over <= 0) return { data, cut: true }
  data.truncated = true
  over += 16 // `"truncated":true,`
  const shorten = (field: 'html' | 'text' | 'subject' | 'from'): void => {
    while (over > 0 && data[field].length > 0) {
      data[field] = cut(data[field], over)
      over = size(data) - budget
    }
  }
  shorten('html')
  shorten('text')
  if (over > 0) {
    const headers: Record<string, string> = {}
    let room = Buffer.byteLength(JSON.stringify(data.headers)) - over
    for (const [k, v] of Object.entries(data.headers)) {
      const value = v.length > HEADER_VALUE_CHARS ? cut(v, v.length - HEADER_VALUE_CHARS) : v
      const bytes = Buffer.byteLength(JSON.stringify(k)) + Buffer.byteLength(JSON.stringify(value)) + 2
      if (bytes > room) break
      headers[k] = value
      room -= bytes
    }
    data.headers = headers
    over = size(data) - budget
  }
  while (over > 0 && data.attachments.length > 0) {
    data.attachments = data.attachments.slice(0, Math.max(0, data.attachments.length - Math.ceil(data.attachments.length / 2)))
    over = size(data) - budget
  }
  shorten('subject')
  shorten('from')
  while (over > 0 && data.to.length > 1) {
    data.to = data.to.slice(0, -1)
    over = size(data) - budget
  }
  return { data, cut: true }
}

/** `processing_error` is at most this long: it names what failed, not the whole error. */
const PROCESSING_ERROR_CHARS = 300

/**
 * The `inbound.received` data of a message that could not be processed (InboundProcessor.endUnprocessable): the
 * envelope and, when the stored message could still be read (`rawKept`), a reference to it; empty content and
 * `processing_error` saying why.
 */
export function unprocessedPayload (
  job: InboundJob, route: RouteRecord, to: string[], reason: string, rawKept = true
): InboundReceivedData {
  const data: InboundReceivedData = {
    message_id: job.id,
    route_id: route.id,
    from: job.mail_from,
    to,
    subject: '',
    text: '',
    html: '',
    headers: {},
    attachments: [],
    received_at: job.received_at,
    processing_error: reason.length > PROCESSING_ERROR_CHARS ? `${reason.slice(0, PROCESSING_ERROR_CHARS - 1)}…` : reason
  }
  if (rawKept) data.raw = { url: rawPath(job.id), size: job.size }
  return data
}
