import { Type, type Static } from 'typebox'

/**
 * Message streams: every organisation sends on `transactional` (always there, never stored, never deleted) and on
 * the `broadcast` streams it creates. A stream's id is its name, chosen by the organisation and unique within it,
 * so the same id in two organisations names two streams; the queued message and every event of it carry the id in
 * `stream`, so nothing downstream reads the stream record to learn it.
 */
export const TRANSACTIONAL_STREAM = 'transactional'

/** Lower-case letters, digits and dashes: the id appears in Redis key names and NATS KV keys as it is. */
export const STREAM_ID_PATTERN = '^[a-z0-9][a-z0-9-]{0,39}$'
const STREAM_ID_RE = new RegExp(STREAM_ID_PATTERN)

/** At most this many broadcast streams per organisation (each costs a few index keys in the read model). */
export const MAX_BROADCAST_STREAMS = 20

export const STREAM_TYPES = ['transactional', 'broadcast'] as const
export type StreamType = (typeof STREAM_TYPES)[number]

/** What a value that is not a stream id is told, wherever one is read. */
export const STREAM_ID_MESSAGE = 'must be a stream id: 1 to 40 lower-case letters, digits and dashes'

/**
 * What a well-formed stream id the organisation does not have is told, wherever one is named: the same words whether
 * or not another organisation has a stream of that id, so the answer tells nothing about other organisations.
 */
export function notOrgStreamMessage (id: string): string {
  return `${id} is not a message stream of this organisation`
}

export const StreamId = Type.String({
  pattern: STREAM_ID_PATTERN,
  description: 'A message stream of the organisation: `transactional` (the default) or a broadcast stream\'s id',
  errorMessage: STREAM_ID_MESSAGE
})

/** A broadcast stream as stored (`<org_id>.<id>` in the streams bucket). */
export const StreamRecord = Type.Object({
  id: Type.String(),
  org_id: Type.String(),
  type: Type.Literal('broadcast'),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  /** The egress pool its mail leaves from, over its domain's and organisation's; set by the operator only. */
  egress_pool: Type.Optional(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String()
})
export type StreamRecord = Static<typeof StreamRecord>

export function isStreamId (value: unknown): value is string {
  return typeof value === 'string' && STREAM_ID_RE.test(value)
}

/** The stream a queued message or an event names; absent (mail queued before streams): transactional. */
export function streamOf (value: { stream?: unknown } | undefined): string {
  const s = value?.stream
  return isStreamId(s) ? s : TRANSACTIONAL_STREAM
}

/** Whether mail of the stream is a broadcast: anything but `transactional`. */
export function isBroadcast (stream: string | undefined): boolean {
  return stream !== undefined && stream !== TRANSACTIONAL_STREAM
}
