import { Type } from 'typebox'
import { BatchRequest, SendRequest, MAX_BATCH } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { ErrorBody } from '../schemas/control.ts'

const SEND_PATH = '/v1/messages/send'
const BATCH_PATH = '/v1/messages/batch'

const SendResult = Type.Object({
  id: Type.String({ description: 'msg_… id of the queued message' }),
  status: Type.Union([Type.Literal('queued'), Type.Literal('scheduled')]),
  created_at: Type.String({ format: 'date-time' }),
  suppressed: Type.Optional(Type.Array(Type.String(), { description: 'Recipients skipped because they are on the suppression list' }))
})

const BatchItemResult = Type.Union([
  SendResult,
  Type.Object({ id: Type.Null(), status: Type.Literal('suppressed'), suppressed: Type.Array(Type.String()) }, {
    description: 'Every recipient of this item is suppressed; nothing was queued for it'
  })
])

const COMMON_ERRORS = {
  400: {
    description: 'validation_error: a field is missing or invalid (the errors array lists each), malformed JSON, wrong Content-Type, ' +
      'a bad Idempotency-Key',
    schema: ErrorBody
  },
  401: { description: 'unauthorized', schema: ErrorBody },
  403: {
    description: 'forbidden: the key lacks send, the from address is outside the key\'s domain, or the domain is not verified',
    schema: ErrorBody
  },
  409: { description: 'conflict: a request with the same Idempotency-Key is still in flight', schema: ErrorBody },
  413: { description: 'payload_too_large: the body is over 10 MB', schema: ErrorBody },
  423: { description: 'stream_paused: the reputation guard paused sending on the stream (docs/reputation.md)', schema: ErrorBody },
  422: {
    description: 'recipient_suppressed (every recipient suppressed), idempotency_key_reused (same key, different body), ' +
      'unprocessable (template_id unknown)',
    schema: ErrorBody
  },
  429: { description: 'rate_limited: see Retry-After and error.retry_after', schema: ErrorBody },
  503: {
    description: 'service_unavailable: JetStream did not confirm the message, or Redis is unavailable; ' +
      'queue_full: the message store is full and ' +
      'nothing was queued (delivery frees room); store_full: Redis is full (maxmemory) and nothing was done; see Retry-After',
    schema: ErrorBody
  }
}

export const messageSendRoutes = [
  route<SendRequest>({
    method: 'post',
    path: SEND_PATH,
    permission: 'send',
    summary: 'Send one message',
    tag: 'Messages',
    description: 'Answers 202 only after the message is durably stored. Send `Idempotency-Key` to make retries safe ' +
      '(kept 24 h per organisation). The message is readable through GET /v1/messages/{id} within 1 s (p99) of the 202, ' +
      'not necessarily at once: a read right after it may be 404.',
    body: SendRequest,
    responses: {
      202: { description: 'Queued (or scheduled); replays carry Idempotent-Replayed: true', schema: SendResult },
      ...COMMON_ERRORS
    },
    handler: async (ctx) => await ctx.deps.send.send(ctx, SEND_PATH)
  }),
  route<BatchRequest>({
    method: 'post',
    path: BATCH_PATH,
    permission: 'send',
    summary: `Send up to ${MAX_BATCH} messages`,
    tag: 'Messages',
    description: 'All-or-nothing validation; every message is stored before the 202. If some could not be stored the answer is 503 ' +
      'and error.details lists accepted (index, id) and failed (indexes). Each message is readable through GET /v1/messages/{id} ' +
      'within 1 s (p99) of the 202, not necessarily at once.',
    body: BatchRequest,
    responses: {
      202: { description: 'Every message queued, in request order', schema: Type.Object({ data: Type.Array(BatchItemResult) }) },
      ...COMMON_ERRORS
    },
    handler: async (ctx) => await ctx.deps.send.batch(ctx, BATCH_PATH)
  })
]
