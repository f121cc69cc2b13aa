import { ApiError, SentContentSchema, idTime, messageContentMaxAgeMs } from '../../protocol/mod.ts'
import { retentionView } from '../control/retention.ts'
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

/** `error.details.reason` of a 404 for a message that exists without content: whether asking again can help. */
export type ContentMissingReason = 'recording_off' | 'expired' | 'not_yet_recorded'

/**
 * Why message `id`, which exists, has no content to show at `now`: the installation records none
 * (OB_MESSAGE_CONTENT_RETENTION_DAYS of 0); the content was kept its days and is gone, while the message itself is
 * kept 30 days (the message's age is read from its id); or the engine has not taken the message up yet.
 */
export function contentMissing (id: string, retentionDays: number, now: number): ApiError {
  const missing = (reason: ContentMissingReason, message: string): ApiError =>
    new ApiError('not_found', message, { details: { reason, retention_days: retentionDays } })
  if (retentionDays === 0) {
    return missing('recording_off', 'Message content is not recorded on this installation (OB_MESSAGE_CONTENT_RETENTION_DAYS is 0).')
  }
  if (now - (idTime(id) ?? now) >= messageContentMaxAgeMs(retentionDays)) {
    const kept = `${retentionDays} ${retentionDays === 1 ? 'day' : 'days'}`
    return missing('expired', `The content of message ${id} is no longer kept: this installation keeps message content ${kept}.`)
  }
  return missing('not_yet_recorded', `The content of message ${id} is not recorded yet; it is, once the engine takes the message up.`)
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
      'Attachments are described (file name, type, size, Content-ID), never returned, except inline images of at most 256 KB (up to 1 MB ' +
      'per message), whose bytes come as `data` so that the HTML\'s `cid:` images can be shown. Sandbox messages have theirs too. ' +
      'The content is recorded when the engine takes the message up, normally within a second of the 202, and kept ' +
      'OB_MESSAGE_CONTENT_RETENTION_DAYS days (30 by default, as long as the message; 0 records none). A message without content ' +
      'answers 404 `not_found` whose `error.details.reason` says why: `not_yet_recorded` (ask again shortly), `expired` (older than ' +
      'the `error.details.retention_days` content is kept) or `recording_off` (this installation records no content).',
    tag: 'Messages',
    responses: {
      200: { description: 'The message content', schema: SentContentSchema },
      403: ErrorDoc('The message belongs to another organisation'),
      404: ErrorDoc(
        'No message with this id (or older than 30 days), or the message has no content: not recorded yet, no longer kept, ' +
        'or not recorded on this installation (error.details.reason)'
      )
    },
    handler: async ({ deps, auth, params }) => {
      const id = params.id!
      await fromStore(readModel(deps).requireMessage(auth.org.id, id))
      // the organisation's own setting when shorter (docs/privacy.md#retention): older content is no longer shown
      const org = deps.cp.orgs.get(auth.org.id) ?? auth.org
      const retentionDays = retentionView(org, deps.config.messageContent.retentionDays).content_days
      // nothing is recorded at 0, and what an earlier setting recorded is not shown
      const content = retentionDays === 0 ? null : await fromContentStore(deps.messageContent.get(id))
      const now = Date.now()
      const old = now - (idTime(id) ?? now) >= messageContentMaxAgeMs(retentionDays)
      if (content === null || old) throw contentMissing(id, retentionDays, now)
      return { status: 200, body: content }
    }
  })
]
