import { Type, type Static } from 'typebox'
import { Compile } from 'typebox/compile'
import { Address, Attachment, Headers, MAX_RECIPIENTS, Metadata, Subject, Tags, TemplateId, Variables } from './send.ts'
import { renderContent } from './templates.ts'
import { DOMAIN_HOST_PATTERN } from './domain_hosts.ts'
import { STREAM_ID_PATTERN } from './message_streams.ts'

/**
 * What the gateway publishes to `ob.out.<shard>`; the engine reads nothing else to deliver, and decodes every
 * message against this schema before it reads a field (engine/queued_ingress.ts). A message that fails is never
 * delivered: it ends `failed` for the recipients it names, with the first problem as the reason.
 *
 * The schema is open at the top level and in `submitted` and `content_ref` (the objects it shares with the send
 * request, such as attachments and headers, stay closed): a field this build does not know is accepted and carried
 * untouched (the engine never publishes a changed queued message; a deferral hands the same bytes back), so a
 * newer gateway may add an optional field that older engines ignore. A change an older engine must not ignore
 * raises `v` (QUEUED_FORMAT_VERSION); an engine hands a message of a newer format back for a newer engine instead
 * of reading it.
 *
 * The content travels in the message: `html` or `text` (or both) is always present, or, for a message too large
 * for the NATS server's `max_payload`, `content_ref` names the one object where it is stored (queued_content.ts). A message sent with a
 * template carries the template's subject (or the caller's own), html and text as they were when the gateway
 * accepted it, `{{var}}` placeholders still in them; the engine renders them with `variables`, HTML-escaping
 * values in `html`, and never reads the template, so editing or deleting it later changes nothing already queued.
 */

/**
 * The queued message's format: the `v` this build's gateways write, and the newest its engines read (a message
 * without `v` is of format 1, the first). Raise it with any change an engine of the previous format would get
 * wrong by ignoring or misreading a field: a new field that changes what is sent, a field whose type or meaning
 * changes. A new optional field that an older engine may safely leave unread needs no new format.
 */
export const QUEUED_FORMAT_VERSION = 1

const idOf = (prefix: string): ReturnType<typeof Type.String> => Type.String({ pattern: `^${prefix}_[0-9a-z]{26}$` })
const ISO_TIME = Type.String({ format: 'date-time', maxLength: 40 })
const Recipients = Type.Array(Address, { maxItems: MAX_RECIPIENTS })

/**
 * A message submitted by SMTP travels as the MIME the application wrote, not as fields to compose: the engine sends
 * `raw` as it is, adding only the DKIM signatures and the per-recipient List-Unsubscribe headers, with the VERP
 * return path as the envelope sender. The structured fields (from, to, cc, bcc, subject, metadata) are still
 * filled, from the envelope and the headers (and `tags` from `X-Outbox-Tags`), for events and the read model; `html`,
 * `text`, `attachments` and `headers` stay empty and tracking is off.
 */
export const SubmittedMime = Type.Object({
  /**
   * The whole message (headers and body, CRLF line ends, the X-Outbox-* headers removed), one character per octet
   * (latin1): 7-bit MIME travels as itself, so a 10 MB message fits a 12 MB NATS message where base64 would not.
   */
  raw: Type.String({ minLength: 1 })
}) // open, like the message: a newer gateway's field here is carried

/**
 * Where the content of a large message is: `html`, `text`, `attachments` and `submitted` are then absent (or
 * empty) here and stored together as one object named by the message id (protocol/queued_content.ts). The engine
 * reads it once per delivery, before anything else, and checks it against `size` and `sha256`.
 */
export const ContentRef = Type.Object({
  size: Type.Integer({ minimum: 1 }),
  /** SHA-256 of the stored object, base64url without padding. */
  sha256: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$' })
}) // open, like the message

export const QueuedMessage = Type.Object({
  /** The format (QUEUED_FORMAT_VERSION when written); absent: 1. A newer one is never decoded with this schema. */
  v: Type.Optional(Type.Integer({ minimum: 1, maximum: QUEUED_FORMAT_VERSION })),
  id: idOf('msg'),
  org_id: idOf('org'),
  domain_id: idOf('dom'),
  key_id: idOf('key'),
  environment: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  from: Address,
  to: Recipients,
  cc: Recipients,
  bcc: Recipients,
  reply_to: Type.Optional(Address),
  subject: Subject,
  html: Type.Optional(Type.String()),
  text: Type.Optional(Type.String()),
  headers: Headers,
  metadata: Metadata,
  /** The send's `tags` or the submitted `X-Outbox-Tags`, each once; absent when there are none. */
  tags: Type.Optional(Tags),
  attachments: Type.Array(Attachment, { maxItems: 20 }),
  template_id: Type.Optional(TemplateId),
  variables: Type.Optional(Variables),
  /** ISO 8601 UTC; the engine does not attempt delivery before it. Absent: send now. */
  scheduled_at: Type.Optional(ISO_TIME),
  track_opens: Type.Boolean(),
  track_clicks: Type.Boolean(),
  /** Recipients dropped at the gateway because they are suppressed (bare addresses). */
  suppressed: Type.Array(Type.String({ maxLength: 320 }), { maxItems: MAX_RECIPIENTS }),
  /**
   * Why each of `suppressed` is on the list, in the same order (the entry's reason when the send was accepted), for the
   * message's record. Absent in messages queued before it existed: their record then says `suppressed` without a reason.
   */
  suppressed_reasons: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: MAX_RECIPIENTS })),
  created_at: ISO_TIME,
  submitted: Type.Optional(SubmittedMime),
  content_ref: Type.Optional(ContentRef),
  /**
   * The sending domain's own return-path host, when verified as the gateway accepted the message: the envelope
   * sender is `bounces+…@<return_path_host>` instead of `…@bounces.<domain>`. Absent: the default. An older engine
   * that ignores it sends with the default, which keeps working (its records stay listed).
   */
  return_path_host: Type.Optional(Type.String({ pattern: DOMAIN_HOST_PATTERN })),
  /** The sending domain's own host for open, click and unsubscribe links, when verified; absent: OB_PUBLIC_URL's. */
  tracking_host: Type.Optional(Type.String({ pattern: DOMAIN_HOST_PATTERN })),
  /**
   * The message stream, as the gateway accepted it; absent: `transactional`. Every event of the message carries it.
   * Every message the engine sends carries one-click unsubscribe whatever its stream, so an older engine that
   * leaves the field unread sends the same message (its events only lack the stream).
   */
  stream: Type.Optional(Type.String({ pattern: STREAM_ID_PATTERN }))
}, {
  // No `additionalProperties: false`: fields of a newer gateway are carried, not refused (see above).
  // The body is in the message, or (large messages) in the one object `content_ref` names.
  anyOf: [{ required: ['html'] }, { required: ['text'] }, { required: ['submitted'] }, { required: ['content_ref'] }]
})
export type QueuedMessage = Static<typeof QueuedMessage>

// Compiled once per process (and per shard thread that imports it); checking a message allocates nothing, and the
// error list is only built for a message that fails.
const checker = Compile(QueuedMessage)

/** Whether `value` is a QueuedMessage. */
export function isQueuedMessage (value: unknown): value is QueuedMessage {
  return checker.Check(value)
}

/**
 * The format a decoded stream message claims: its `v`, or 1 when it has none; undefined when it is not an object,
 * or its `v` is not a whole number from 1 (damaged: the schema check says where).
 */
export function queuedFormatOf (value: unknown): number | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const v = (value as { v?: unknown }).v
  if (v === undefined) return 1
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 ? v : undefined
}

/**
 * Where `value` first departs from the schema (`/to/0 must match pattern ...`), for a value isQueuedMessage
 * refused. The gateway asks it before publishing a message it built from outside input (SMTP submission); the
 * engine before reading a field.
 */
export function queuedMessageProblem (value: unknown): string {
  const first = checker.Errors(value)[0]
  if (first === undefined) return 'not a queued message'
  // `additionalProperties: false` (of a nested object) reports an unknown field as the schema `false` at its path
  const problem = first.keyword === 'boolean' ? 'is not a field of the queued message' : first.message
  return `${first.instancePath === '' ? 'message' : first.instancePath} ${problem}`
}

/**
 * The subject the recipients see: a message naming a template carries the template's text with its placeholders,
 * rendered here exactly as the engine renders it for sending. The read model records this, never the raw text.
 */
export function renderedSubject (msg: Pick<QueuedMessage, 'subject' | 'template_id' | 'variables'>): string {
  if (msg.template_id === undefined) return msg.subject
  return renderContent({ subject: msg.subject }, msg.variables ?? {}).subject
}
