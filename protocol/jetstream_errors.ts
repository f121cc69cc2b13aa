/**
 * JetStream refusing a write for lack of room, told apart by the server's error code (`err_code`), never by its text,
 * which changes between server and client versions. Here rather than beside the NATS clients so that the one error
 * table (errors.ts) can answer `store_full` for it, whichever store call met it.
 */

/** nats-server's codes (server/errors.json) for a lack of room. */
export const JETSTREAM_ROOM_CODES = {
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

const STORE_FULL_CODES = new Set<number>(Object.values(JETSTREAM_ROOM_CODES))

/**
 * The server's code of a JetStream API error (nats.js's JetStreamApiError, whose `code` is the server's `err_code`
 * and `apiError()` the whole error), or of a refused publish (`apiCode`: stores/clients/js_publisher.ts), or of what
 * caused either.
 */
export function jetStreamErrorCode (err: unknown): number | undefined {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 4; e = (e as Error).cause, depth++) {
    const { code, apiCode, apiError } = e as { code?: unknown, apiCode?: unknown, apiError?: unknown }
    if (typeof apiError === 'function' && typeof code === 'number') return code
    if (typeof apiCode === 'number') return apiCode
  }
  return undefined
}

/** JetStream refused a write because the stream, or the whole store, has no room for it. */
export function isJetStreamFull (err: unknown): boolean {
  const code = jetStreamErrorCode(err)
  return code !== undefined && STORE_FULL_CODES.has(code)
}
