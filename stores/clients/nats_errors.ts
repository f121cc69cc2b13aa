import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream'
import { JETSTREAM_ROOM_CODES } from '../../protocol/mod.ts'
import { PublishRejectedError } from './js_publisher.ts'

export { isJetStreamFull } from '../../protocol/mod.ts'

/**
 * JetStream API failures told apart by the server's error code (`err_code`), never by their text, which
 * changes between server and client versions.
 */
function apiCode (err: unknown): number | undefined {
  if (err instanceof PublishRejectedError) return err.apiCode
  return err instanceof JetStreamApiError ? err.code : undefined
}

export function isStreamNotFound (err: unknown): boolean {
  return apiCode(err) === JetStreamApiCodes.StreamNotFound
}

export function isConsumerNotFound (err: unknown): boolean {
  return apiCode(err) === JetStreamApiCodes.ConsumerNotFound
}

/** A write expecting a subject's last sequence (KV `create`/`update`) found another: someone else wrote first. */
export function isWrongLastSequence (err: unknown): boolean {
  const code = apiCode(err)
  return code === JetStreamApiCodes.StreamWrongLastSequence || code === JetStreamApiCodes.StreamWrongLastSequenceUnknown
}

/** Creating or growing a stream failed: the server cannot reserve its `max_bytes` in its store. */
export function isStorageNotReservable (err: unknown): boolean {
  const code = apiCode(err)
  return code === JETSTREAM_ROOM_CODES.storageResourcesExceeded
}
