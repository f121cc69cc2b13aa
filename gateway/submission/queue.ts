import { createHash, randomUUID } from 'node:crypto'
import {
  ApiError, QUEUED_FORMAT_VERSION, isQueuedMessage, newId, queuedMessageProblem, uniqueTags, queuedHosts, type QueuedMessage
} from '../../protocol/mod.ts'
import type { AuthContext } from '../auth.ts'
import type { SendService } from '../send/service.ts'
import type { IdempotencyStore, RetryState } from '../idempotency/mod.ts'
import type { SubmittedMessage } from './mime.ts'
import { SmtpReply } from '../../stores/smtp_server/mod.ts'

/**
 * Every repeat of a Message-ID is the same request, whatever its bytes (the rule is "never send twice"), so all
 * share one fingerprint, of the store's shape (64 hex characters).
 */
const FINGERPRINT = createHash('sha256').update('smtp-submission').digest('hex')

export interface QueuedReply { id: string, duplicate: boolean }

/**
 * Turns a received submission into the queued message and publishes it through the HTTP send's path (the PubAck
 * before the 250, the read-model record after). A Message-ID the same key submitted within 24 h answers the first
 * message's id without publishing again (the HTTP send's idempotency store, keyed by key and Message-ID).
 */
export class SubmissionQueue {
  private readonly idempotency: IdempotencyStore

  constructor (private readonly send: SendService, idempotency: IdempotencyStore) {
    this.idempotency = idempotency
  }

  async queue (auth: AuthContext, envelope: string[], mail: SubmittedMessage, suppressed: string[], id: string): Promise<QueuedReply> {
    if (mail.messageId === undefined) return await this.publish(auth, envelope, mail, suppressed, id, new Date().toISOString())
    const key = `smtp:${auth.key.id}:${createHash('sha256').update(mail.messageId).digest('hex')}`
    let claim
    try {
      claim = await this.idempotency.claim(auth.org.id, key, FINGERPRINT, randomUUID())
    } catch (err) {
      throw new SmtpReply(451, 'The duplicate check is unavailable; try again shortly', { enhanced: '4.3.0', cause: err })
    }
    if (claim.state === 'done') return { id: (JSON.parse(claim.json) as { id: string }).id, duplicate: true }
    if (claim.state !== 'claimed') {
      throw new SmtpReply(451, 'A message with this Message-ID is being queued; try again shortly', { enhanced: '4.3.0' })
    }
    // A retry after a failed publish reuses the id, so JetStream drops a copy it stored without confirming.
    const previous: RetryState | undefined = claim.previous
    const messageId = previous?.ids[0] ?? id
    const createdAt = previous?.created_at ?? new Date().toISOString()
    try {
      const r = await this.publish(auth, envelope, mail, suppressed, messageId, createdAt)
      await claim.complete(250, JSON.stringify({ id: r.id })).catch(() => {})
      return r
    } catch (err) {
      if (err instanceof SmtpReply && err.responseCode === 451) {
        await claim.keepForRetry({ ids: [messageId], created_at: createdAt, accepted: [] })
      } else {
        await claim.release()
      }
      throw err
    }
  }

  private async publish (
    auth: AuthContext, envelope: string[], mail: SubmittedMessage, suppressed: string[], id: string, createdAt: string
  ): Promise<QueuedReply> {
    const to: string[] = []
    const cc: string[] = []
    const bcc: string[] = []
    for (const r of envelope) (mail.to.has(r) ? to : mail.cc.has(r) ? cc : bcc).push(r)
    const msg: QueuedMessage = {
      v: QUEUED_FORMAT_VERSION,
      id,
      org_id: auth.org.id,
      domain_id: auth.domain.id,
      key_id: auth.key.id,
      environment: auth.key.environment,
      from: mail.fromAddress,
      to,
      cc,
      bcc,
      subject: recordSubject(mail.subject),
      headers: {},
      metadata: mail.metadata,
      ...(mail.tags.length > 0 ? { tags: uniqueTags(mail.tags) } : {}),
      attachments: [],
      // The MIME is sent as written: no link is rewritten and no pixel added.
      track_opens: false,
      track_clicks: false,
      suppressed,
      created_at: createdAt,
      submitted: { raw: mail.mime.toString('latin1') },
      ...queuedHosts(auth.domain),
      ...(mail.stream !== undefined ? { stream: mail.stream } : {})
    }
    // The engine delivers only what its schema accepts: refuse here, before the 250, anything it would not.
    if (!isQueuedMessage(msg)) throw new SmtpReply(554, `Message refused: ${queuedMessageProblem(msg)}`, { enhanced: '5.6.0' })
    try {
      await this.send.enqueue({ msg, status: 'queued' })
    } catch (err) {
      const e = ApiError.from(err)
      // permanent, as the HTTP 423: retrying cannot help until an admin resumes the stream (docs/reputation.md)
      if (e.code === 'stream_paused') throw new SmtpReply(550, e.message, { enhanced: '5.7.1', cause: err })
      if (e.code === 'payload_too_large') {
        throw new SmtpReply(552, 'Message too large for the message store', { enhanced: '5.3.4', cause: err })
      }
      if (e.code === 'queue_full') throw new SmtpReply(452, 'The message store is full; try again later', { enhanced: '4.3.1', cause: err })
      throw new SmtpReply(451, 'The message store did not confirm the message in time; try again shortly',
        { enhanced: '4.3.0', cause: err })
    }
    return { id, duplicate: false }
  }
}

/**
 * The subject as the message record shows it: one line of at most 998 characters. The mail itself keeps the
 * Subject header exactly as submitted.
 */
function recordSubject (decoded: string): string {
  const line = decoded.replace(/[\r\n\0]+/g, ' ')
  return line.length > 998 ? line.slice(0, 998) : line
}

export function newMessageId (): string {
  return newId('msg')
}
