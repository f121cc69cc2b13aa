import { Type } from 'typebox'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { ApiError, MAX_SCHEDULE_AHEAD_MS, STREAM_OUTBOUND } from '../../protocol/mod.ts'
import type { MessageDetail } from '../../stores/read_model/mod.ts'
import { route } from '../http/route.ts'
import { readModel, fromStore } from '../http/read_model.ts'
import { ErrorBody } from '../schemas/control.ts'
import { SCHEDULE_SKEW_MS } from '../send/prepare.ts'
import type { GatewayDeps } from '../deps.ts'

const RescheduleRequest = Type.Object({
  scheduled_at: Type.String({ format: 'date-time', description: 'The new time: at most 72 hours ahead; up to 60 s in the past means now' })
}, { additionalProperties: false })
interface RescheduleBody { scheduled_at: string }

const CancelResult = Type.Object({ id: Type.String(), status: Type.Literal('canceled') })
const RescheduleResult = Type.Object({
  id: Type.String(), status: Type.Literal('scheduled'), scheduled_at: Type.String({ format: 'date-time' })
})

const ERRORS = {
  401: { description: 'unauthorized', schema: ErrorBody },
  403: { description: 'forbidden: the key lacks send, or the message belongs to another organisation', schema: ErrorBody },
  404: { description: 'not_found: no message with this id (or older than 30 days)', schema: ErrorBody },
  409: {
    description: 'conflict: the message is not (or no longer) scheduled: it is being sent or was sent, was never scheduled, ' +
      'or (reschedule) was canceled',
    schema: ErrorBody
  },
  503: { description: 'service_unavailable: Redis or JetStream is unavailable; the request may be retried as it is', schema: ErrorBody }
}

const notScheduled = (id: string): ApiError =>
  new ApiError('conflict', `Message ${id} is not scheduled any more: it is being sent, was sent, or was canceled.`)

/** The message of the caller's organisation, as GET /v1/messages/{id} finds it (404, or 403 for another's). */
async function scheduledMessage (deps: GatewayDeps, orgId: string, id: string): Promise<MessageDetail> {
  const m = await fromStore(readModel(deps).getMessage(orgId, id))
  if (m.scheduled_at === undefined) throw new ApiError('conflict', `Message ${id} was not scheduled.`)
  return m
}

/**
 * The engine holds a waiting copy of the message back until the time it last read; a new earlier time needs a copy
 * of the same queued message that comes now (the engine sends one copy, drops the others). Its id makes the same
 * reschedule retried publish it once.
 */
async function wake (deps: GatewayDeps, id: string, seq: number, at: number): Promise<void> {
  try {
    const stored = await (await jetstreamManager(deps.nc)).streams.getMessage(STREAM_OUTBOUND, { seq })
    if (stored === null) return // no longer stored: the copy was taken up, so the reschedule would have been refused
    await jetstream(deps.nc).publish(stored.subject, stored.data, { msgID: `${id}:at:${at}` })
  } catch (err) {
    throw new ApiError('service_unavailable', 'The new time is stored but the message could not be woken up; retry the same request.', {
      cause: err, retryAfter: 1
    })
  }
}

export const messageScheduleRoutes = [
  route({
    method: 'post',
    path: '/v1/messages/:id/cancel',
    idPrefix: 'msg',
    permission: 'send',
    summary: 'Cancel a scheduled message',
    description: 'Only while the message is `scheduled`: it is then never sent and its status becomes `canceled` (no webhook event). ' +
      'Cancelling a canceled message answers 200 again. A message that is being sent or was sent answers 409 `conflict`.',
    tag: 'Messages',
    responses: { 200: { description: 'Canceled: the message will never be sent', schema: CancelResult }, ...ERRORS },
    handler: async ({ deps, auth, params }) => {
      const id = params.id!
      const m = await scheduledMessage(deps, auth.org.id, id)
      // a status past `scheduled` is final for this question (the schedule state may have expired since)
      if (m.status !== 'scheduled' && m.status !== 'canceled') throw notScheduled(id)
      const verdict = await fromStore(deps.schedule.cancel(id))
      if (verdict.kind === 'conflict') throw notScheduled(id)
      await fromStore(readModel(deps).markCanceled(auth.org.id, id))
      return { status: 200, body: { id, status: 'canceled' } }
    }
  }),
  route<RescheduleBody>({
    method: 'patch',
    path: '/v1/messages/:id',
    idPrefix: 'msg',
    permission: 'send',
    summary: 'Reschedule a scheduled message',
    description: 'Only while the message is `scheduled` (else 409 `conflict`, also for a canceled message). ' +
      'The message is sent at the new time, ' +
      'earlier or later than the first one, to the second. At most 72 hours ahead and at most 72 hours after the message was accepted ' +
      '(its `created_at`); up to 60 s in the past means now; further back is 400.',
    tag: 'Messages',
    body: RescheduleRequest,
    responses: {
      200: { description: 'The new time', schema: RescheduleResult },
      400: {
        description: 'validation_error: scheduled_at is missing, not a date-time, more than 60 s in the past, more than 72 hours ahead, ' +
          'or more than 72 hours after the message was accepted',
        schema: ErrorBody
      },
      ...ERRORS
    },
    handler: async ({ deps, auth, params, body }) => {
      const id = params.id!
      const now = Date.now()
      const requested = Date.parse(body.scheduled_at)
      const invalid = (message: string): ApiError => new ApiError('validation_error', `scheduled_at ${message}`, {
        errors: [{ field: 'scheduled_at', message }], field: 'scheduled_at'
      })
      if (Number.isNaN(requested)) throw invalid('must be an ISO 8601 date-time')
      if (requested < now - SCHEDULE_SKEW_MS) throw invalid('must not be in the past')
      if (requested > now + MAX_SCHEDULE_AHEAD_MS) throw invalid('must be at most 72 hours ahead')
      const at = Math.max(requested, now)
      const m = await scheduledMessage(deps, auth.org.id, id)
      if (m.status !== 'scheduled') throw notScheduled(id)
      // A message is sent within 72 h of its acceptance, as at the send: what is kept for it (the stored content of a
      // large message, stores/content) lasts that long plus the retry span, which counts from the new time.
      const latest = Date.parse(m.created_at) + MAX_SCHEDULE_AHEAD_MS
      if (at > latest) throw invalid(`must be at most 72 hours after the message was accepted (${new Date(latest).toISOString()})`)
      const verdict = await fromStore(deps.schedule.reschedule(id, at))
      if (verdict.kind === 'conflict') throw notScheduled(id)
      const iso = new Date(at).toISOString()
      await fromStore(readModel(deps).markRescheduled(auth.org.id, id, iso))
      if (verdict.waitingSeq !== undefined && at < Date.parse(m.scheduled_at!)) await wake(deps, id, verdict.waitingSeq, at)
      return { status: 200, body: { id, status: 'scheduled', scheduled_at: iso } }
    }
  })
]
