import { Type, type Static } from 'typebox'
import { Address, Attachment, Headers, MAX_RECIPIENTS, Metadata, Subject, TemplateId, Variables } from './send.ts'

/**
 * What the gateway publishes to `ob.out.<shard>`; the engine reads nothing else to deliver, and decodes every
 * message against this schema before it reads a field (engine/queued_ingress.ts). A message that fails is never
 * delivered: the engine terminates it and logs the first problem.
 *
 * The content travels in the message: `html` or `text` (or both) is always present. A message sent with a
 * template carries the template's subject (or the caller's own), html and text as they were when the gateway
 * accepted it, `{{var}}` placeholders still in them; the engine renders them with `variables`, HTML-escaping
 * values in `html`, and never reads the template, so editing or deleting it later changes nothing already queued.
 */

const idOf = (prefix: string): ReturnType<typeof Type.String> => Type.String({ pattern: `^${prefix}_[0-9a-z]{26}$` })
const ISO_TIME = Type.String({ format: 'date-time', maxLength: 40 })
const Recipients = Type.Array(Address, { maxItems: MAX_RECIPIENTS })

export const QueuedMessage = Type.Object({
  v: Type.Literal(1),
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
  attachments: Type.Array(Attachment, { maxItems: 20 }),
  template_id: Type.Optional(TemplateId),
  variables: Type.Optional(Variables),
  /** ISO 8601 UTC; the engine does not attempt delivery before it. Absent: send now. */
  scheduled_at: Type.Optional(ISO_TIME),
  track_opens: Type.Boolean(),
  track_clicks: Type.Boolean(),
  /** Recipients dropped at the gateway because they are suppressed (bare addresses). */
  suppressed: Type.Array(Type.String({ maxLength: 320 }), { maxItems: MAX_RECIPIENTS }),
  created_at: ISO_TIME
}, {
  additionalProperties: false,
  // The body is in the message, never looked up at delivery.
  anyOf: [{ required: ['html'] }, { required: ['text'] }]
})
export type QueuedMessage = Static<typeof QueuedMessage>
