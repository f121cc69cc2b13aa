import { Type } from 'typebox'
import { ApiError, MESSAGE_STATUSES, RECIPIENT_STATUSES, StreamId, Tag } from '../../protocol/mod.ts'
import type { MessageStore } from '../../stores/read_model/mod.ts'
import type { GatewayDeps } from '../deps.ts'

/** The read model behind GET /v1/messages, /v1/events and /v1/stats: the gateway's one MessageStore. */
export function readModel (deps: GatewayDeps): MessageStore {
  return deps.messages
}

/**
 * Awaits a read-model call; a Redis failure (connection lost, command timeout) becomes 503 with
 * `retry_after`, while programming errors stay 500.
 */
export async function fromStore<T> (p: Promise<T>): Promise<T> {
  try {
    return await p
  } catch (err) {
    if (err instanceof ApiError || err instanceof TypeError || err instanceof SyntaxError || err instanceof RangeError) throw err
    throw new ApiError('service_unavailable', 'The message store is unavailable; retry shortly.', { cause: err, retryAfter: 1 })
  }
}

export const EventEnvelopeSchema = Type.Object({
  id: Type.String({ description: 'evt_…, unique per event; the same id as the webhook delivery' }),
  type: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
  data: Type.Record(Type.String(), Type.Unknown(), {
    description: 'The fields of the event type (docs/webhooks.md). `bounced`: `bounce_type` (`hard` or `soft`), `bounce_code`, ' +
      '`bounce_message`, `bounce_category` (`mailbox`, `domain`, `policy`, `content`, `size`, `mailbox_full`, `other` or ' +
      '`operator`; only `mailbox` and `domain` suppress the address) and `bounced_at`.'
  })
})

export const MessageStatusSchema = Type.Union(MESSAGE_STATUSES.map((s) => Type.Literal(s)))

export const MessageSummarySchema = Type.Object({
  id: Type.String(),
  from: Type.String(),
  to: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  bcc: Type.Array(Type.String()),
  subject: Type.String({ description: 'As the recipients see it: a template\'s subject is rendered with the variables' }),
  status: MessageStatusSchema,
  environment: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  created_at: Type.String({ format: 'date-time' }),
  scheduled_at: Type.Optional(Type.String({ format: 'date-time' })),
  metadata: Type.Record(Type.String(), Type.String()),
  recipient_count: Type.Integer({
    minimum: 0, description: 'Distinct recipients of the request (to, cc and bcc), suppressed ones included'
  }),
  delivered_count: Type.Integer({ minimum: 0, description: 'Recipients delivered so far (complained ones included)' }),
  tags: Type.Array(Type.String(), { description: 'the tags given at send (empty when none)' }),
  stream: Type.String({ description: 'The message stream it was sent on (`transactional` or a broadcast stream\'s id)' }),
  next_attempt_at: Type.Optional(Type.String({
    format: 'date-time',
    description: 'When the next delivery attempt is due, for a message waiting for one: queued or scheduled (its `scheduled_at`, ' +
      'else `created_at`); deferred, or in any status while one of its recipients is deferred (the `next_attempt_at` of its latest ' +
      '`deferred` event); sending (as deferred when a recipient was deferred before, else as queued). Absent once every recipient ' +
      'has an outcome.'
  })),
  stuck: Type.Boolean({
    description: '`true` when `next_attempt_at` passed more than the grace ago (OB_STUCK_AFTER_MS, default 5 minutes) without an attempt ' +
      '(most often no engine is delivering the message). Worked out when read; `false` again once an attempt moves the message on.'
  }),
  opened_count: Type.Integer({ minimum: 0, description: 'Open events of the message so far (every recipient\'s; 0 without tracking)' }),
  clicked_count: Type.Integer({ minimum: 0, description: 'Click events of the message so far (every recipient\'s)' }),
  bounce_reason: Type.Optional(Type.String({
    description: 'When a recipient bounced: the latest bounce\'s SMTP code and reply (`550 5.1.1 mailbox unknown`), at most 300 characters'
  }))
})

export const RecipientStateSchema = Type.Object({
  address: Type.String({ description: 'Bare address, lower-cased' }),
  status: Type.Union(RECIPIENT_STATUSES.map((s) => Type.Literal(s)), {
    description: 'The recipient\'s own status; `suppressed`: skipped at the send, the address being on the suppression list'
  }),
  reason: Type.Optional(Type.String({
    description: 'Why a `suppressed` recipient is on the list: hard_bounce, complaint, unsubscribe or manual'
  })),
  attempts: Type.Integer({ minimum: 0, description: 'Delivery attempts that ended (delivered, deferred, bounced or failed)' }),
  last_event_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'Latest event about this recipient; null before any'
  })
})

/** `?tag=`: one tag, checked like the tags of a send (a bad value is a 400 naming `tag`). */
export const TagQuery = { tag: Type.Optional(Tag) }

/** The `tag` query parameter when given (the route has already checked it against TagQuery). */
export function tagParam (query: URLSearchParams): { tag?: string } {
  const tag = query.get('tag')
  return tag === null ? {} : { tag }
}

/** `?stream=`: one message stream's id (`transactional` or a broadcast stream's); a bad value is a 400 naming `stream`. */
export const StreamQuery = { stream: Type.Optional(StreamId) }

/** The 422 of a read given a `stream` that is none of the organisation's (readable_stream.ts). */
export const STREAM_NOT_FOUND_DOC = '`stream_not_found` naming `stream`: a stream id the organisation neither has nor had with ' +
  'messages, events or suppressions still stored (the same answer whether or not another organisation has a stream of that id)'

/** The `stream` query parameter when given (the route has already checked it against StreamQuery). */
export function streamParam (query: URLSearchParams): { stream?: string } {
  const stream = query.get('stream')
  return stream === null ? {} : { stream }
}

export const ErrorDoc = (description: string) => ({ description })
