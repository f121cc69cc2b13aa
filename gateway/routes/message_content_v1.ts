import { Type } from 'typebox'
import { ApiError } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { readModel, fromStore, ErrorDoc } from '../http/read_model.ts'

const Nullable = (t: ReturnType<typeof Type.String>, description: string) => Type.Union([t, Type.Null()], { description })

export const AttachmentInfoSchema = Type.Object({
  filename: Type.String(),
  content_type: Type.String({ description: 'As sent: the one given, else the one the file name implies' }),
  size: Type.Integer({ minimum: 0, description: 'Decoded bytes' }),
  content_id: Nullable(Type.String(), 'The Content-ID of an inline attachment (without angle brackets), else null')
})

export const MessageContentSchema = Type.Object({
  id: Type.String(),
  subject: Type.String({ description: 'As sent: a template\'s subject rendered with the variables' }),
  from: Type.String(),
  to: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  reply_to: Nullable(Type.String(), 'null when none was given'),
  html: Nullable(Type.String(), 'The HTML part as rendered for sending, before the per-recipient open pixel and click links; null when none'),
  text: Nullable(Type.String(), 'The text part; null when none'),
  headers: Type.Record(Type.String(), Type.String(), { description: 'The custom headers given at send (SMTP submission: the submitted header lines other than the addressing, subject, date, Message-ID and MIME ones)' }),
  attachments: Type.Array(AttachmentInfoSchema, { description: 'What was attached; the attachment bytes are not kept' })
})

/** Unavailable JetStream is a 503 to retry, like an unavailable read model. */
async function fromContentStore<T> (p: Promise<T>): Promise<T> {
  try {
    return await p
  } catch (err) {
    throw new ApiError('service_unavailable', 'The message content store is unavailable; retry shortly.', { cause: err, retryAfter: 1 })
  }
}

export const messageContentRoutes = [
  route({
    method: 'get',
    path: '/v1/messages/:id/content',
    idPrefix: 'msg',
    permission: 'read',
    summary: 'The message as it was rendered for sending: subject, HTML, text, headers, attachment names',
    description: 'The content the recipients were sent: a template send rendered with its variables, the HTML before the per-recipient ' +
      'open pixel and click-tracking links were added; for SMTP submission, the text and HTML parts of the submitted message. ' +
      'Attachments are described (file name, type, size, Content-ID), never returned. Sandbox messages have theirs too. ' +
      'The content is recorded when the engine takes the message up, normally within a second of the 202, and kept as long as ' +
      'the message (30 days); before it is recorded the answer is 404 `not_found`.',
    tag: 'Messages',
    responses: {
      200: { description: 'The message content', schema: MessageContentSchema },
      403: ErrorDoc('The message belongs to another organisation'),
      404: ErrorDoc('No message with this id (or older than 30 days), or its content is not recorded yet')
    },
    handler: async ({ deps, auth, params }) => {
      const id = params.id!
      await fromStore(readModel(deps).requireMessage(auth.org.id, id))
      const content = await fromContentStore(deps.messageContent.get(id))
      if (content === null) throw new ApiError('not_found', `The content of message ${id} is not recorded yet; it is, once the engine takes the message up.`)
      return { status: 200, body: content }
    }
  })
]
