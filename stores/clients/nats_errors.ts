import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream'
import { PublishRejectedError } from './js_publisher.ts'

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

/** nats-server's codes (server/errors.json) for a lack of room. */
const NATS_CODES = {
  /** JSAccountResourcesExceededErr: the account's JetStream limits. */
  accountResourcesExceeded: 10002,
  /** JSInsufficientResourcesErr: the server's store is past `max_file_store`; every write is refused. */
  insufficientResources: 10023,
  /** JSStorageResourcesExceededErr: the store cannot take (or reserve) this many more bytes. */
  storageResourcesExceeded: 10047,
  /**
   * JSStreamStoreFailedF: the stream's store refused the message; for the streams Outbox writes, which set no
   * message-count limits, that is a stream at its `max_bytes` with `discard: new`.
   */
  streamStoreFailed: 10077
} as const

const STORE_FULL_CODES = new Set<number>(Object.values(NATS_CODES))

/** The code of a JetStream API error, or of a refused publish (js_publisher.ts), or of what caused either. */
function refusalCode (err: unknown): number | undefined {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 4; e = (e as Error).cause, depth++) {
    if (e instanceof JetStreamApiError) return e.code
    const apiCode = (e as { apiCode?: unknown }).apiCode
    if (typeof apiCode === 'number') return apiCode
  }
  return undefined
}

/** JetStream refused a write because the stream, or the whole store, has no room for it. */
export function isJetStreamFull (err: unknown): boolean {
  const code = refusalCode(err)
  return code !== undefined && STORE_FULL_CODES.has(code)
}

/** Creating or growing a stream failed: the server cannot reserve its `max_bytes` in its store. */
export function isStorageNotReservable (err: unknown): boolean {
  const code = apiCode(err)
  return code === NATS_CODES.storageResourcesExceeded
}
