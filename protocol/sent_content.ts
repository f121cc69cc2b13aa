import { Type, type Static } from 'typebox'

const Nullable = (t: ReturnType<typeof Type.String>, description: string) => Type.Union([t, Type.Null()], { description })

/** One attachment as it was sent: its name, type, decoded size in bytes and Content-ID; the bytes of small inline images only. */
export const SentAttachmentSchema = Type.Object({
  filename: Type.String(),
  content_type: Type.String({ description: 'As sent: the one given, else the one the file name implies' }),
  size: Type.Integer({ minimum: 0, description: 'Decoded bytes' }),
  content_id: Nullable(Type.String(), 'The Content-ID of an inline attachment (without angle brackets), else null'),
  data: Type.Optional(Type.String({
    description: 'An inline image (a Content-ID and a PNG, JPEG, GIF or WebP type) of at most 256 KB, within 1 MB for all of ' +
      'the message\'s: its bytes in base64, so that the HTML\'s `cid:` image can be shown. Absent for every other attachment'
  }))
})

/**
 * A message as it was rendered for sending, before per-recipient tracking rewrote its links: what the engine
 * records (stores/message_content) and GET /v1/messages/{id}/content answers, one schema for both.
 */
export const SentContentSchema = Type.Object({
  id: Type.String(),
  subject: Type.String({ description: 'As sent: a template\'s subject rendered with the variables' }),
  from: Type.String(),
  to: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  reply_to: Nullable(Type.String(), 'null when none was given'),
  html: Nullable(
    Type.String(), 'The HTML part as rendered for sending, before the per-recipient open pixel and click links; null when none'
  ),
  text: Nullable(Type.String(), 'The text part; null when none'),
  headers: Type.Record(Type.String(), Type.String(), {
    description: 'The custom headers given at send (SMTP submission: the submitted header lines other than the addressing, ' +
      'subject, date, Message-ID and MIME ones)'
  }),
  attachments: Type.Array(SentAttachmentSchema, {
    description: 'What was attached; the attachment bytes are not kept, except those of small inline images (`data`)'
  })
})

export type SentAttachment = Static<typeof SentAttachmentSchema>
export type SentContent = Static<typeof SentContentSchema>
