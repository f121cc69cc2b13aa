import { ApiError, SentContentSchema } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { readModel, fromStore, ErrorDoc } from '../http/read_model.ts'

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
      200: { description: 'The message content', schema: SentContentSchema },
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
