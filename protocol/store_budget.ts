import {
  KV_BUCKETS, KV_IDEMPOTENCY, KV_SCHEDULE_DECISIONS, KV_SHARD_LEASES, OBJ_INBOUND_RAW, OBJ_OUTBOUND_CONTENT, STREAM_EVENTS,
  STREAM_AUDIT, STREAM_INBOUND, STREAM_MESSAGE_CONTENT, STREAM_OUTBOUND, STREAM_WEBHOOK_JOBS
} from './subjects.ts'

/**
 * How the JetStream file store (OB_NATS_STORE_MB) is divided: every stream, key-value bucket and object store
 * Outbox creates gets a `max_bytes` of its own, and the shares add up to less than the whole. nats-server refuses
 * every write on the server once the bytes stored reach its `max_file_store`, the lease bucket's and the outcome
 * events' included; with every entry capped and the caps summed below the store, that never happens: a full
 * entry refuses only its own writes. So a full outbound queue leaves room for the leases, the events and the
 * acknowledgements that deliver it, and delivering is what frees it. nats-server also reserves each `max_bytes`
 * when the entry is created, so a store too small for the budget fails at start, not once it fills.
 *
 * Shares are in thousandths of the store; docs/operations.md lists the same figures and a unit test keeps them
 * equal. Entries holding work still owed (a queued message, an inbound job, a webhook attempt, content or a raw
 * message they need, a control-plane record) refuse new writes when full (`discard: new`); only the history
 * kept for the read API (events, sent content, the audit log) drops its oldest when full (`discard: old`).
 */
export const STORE_SHARES_PER_MILLE: Readonly<Record<string, number>> = {
  [STREAM_OUTBOUND]: 300,
  [`OBJ_${OBJ_OUTBOUND_CONTENT}`]: 150,
  [STREAM_EVENTS]: 170,
  [STREAM_MESSAGE_CONTENT]: 75,
  [STREAM_AUDIT]: 10,
  [STREAM_WEBHOOK_JOBS]: 80,
  [STREAM_INBOUND]: 20,
  [`OBJ_${OBJ_INBOUND_RAW}`]: 50,
  [`KV_${KV_BUCKETS.suppressions}`]: 30,
  [`KV_${KV_BUCKETS.templates}`]: 10,
  [`KV_${KV_BUCKETS.orgs}`]: 3,
  [`KV_${KV_BUCKETS.domains}`]: 3,
  [`KV_${KV_BUCKETS.domainNames}`]: 3,
  [`KV_${KV_BUCKETS.apiKeys}`]: 3,
  [`KV_${KV_BUCKETS.webhooks}`]: 3,
  [`KV_${KV_BUCKETS.routes}`]: 3,
  [`KV_${KV_BUCKETS.settings}`]: 3,
  [`KV_${KV_BUCKETS.verpKeys}`]: 3,
  [`KV_${KV_BUCKETS.operatorKeys}`]: 3,
  [`KV_${KV_BUCKETS.egress}`]: 3,
  [`KV_${KV_BUCKETS.streams}`]: 3,
  [`KV_${KV_SHARD_LEASES}`]: 7,
  [`KV_${KV_IDEMPOTENCY}`]: 20,
  [`KV_${KV_SCHEDULE_DECISIONS}`]: 5
}

/** The `max_bytes` of the stream (a bucket's stream: `KV_<bucket>`, `OBJ_<bucket>`) named `stream`. */
export function storeShareBytes (storeBytes: number, stream: string): number {
  const share = STORE_SHARES_PER_MILLE[stream]
  if (share === undefined) throw new Error(`no store share for ${stream}`)
  return Math.floor(storeBytes * share / 1000)
}

/** The `max_bytes` of the key-value bucket `bucket`. */
export function kvShareBytes (storeBytes: number, bucket: string): number {
  return storeShareBytes(storeBytes, `KV_${bucket}`)
}

/** The `max_bytes` of the object store `bucket`. */
export function objectStoreShareBytes (storeBytes: number, bucket: string): number {
  return storeShareBytes(storeBytes, `OBJ_${bucket}`)
}

/**
 * The part of an owed-work entry's share (the outbound queue, large messages' content, inbound jobs and raw mail,
 * webhook jobs) that new work is never given: Outbox stops admitting work at three quarters of the share, and
 * `max_bytes` stays the hard stop above. The quarter is room for what a killed nats-server 2.9 brings back: it
 * writes the removals of acknowledged messages down seconds after the fact, so after a `SIGKILL` the last seconds'
 * delivered messages are stored again, and a stream over its `max_bytes` at start is cut back from its oldest
 * messages, whatever its discard policy: the mail waiting longest for its schedule or its next attempt. Below the
 * admission limit the returning messages fit, the work sweep (engine/work_queue_sweep.ts) removes them again, and
 * nothing waiting is cut. The bound this gives: at most a quarter of the share delivered in the seconds before a
 * kill (at the default store, about 770 MB of the outbound queue's 3 GB).
 */
export const ADMISSION_PER_MILLE = 750

/** The bytes an owed-work entry with `max_bytes` may hold before Outbox refuses new work for it. */
export function admissionLimitBytes (maxBytes: number): number {
  return Math.floor(maxBytes * ADMISSION_PER_MILLE / 1000)
}
