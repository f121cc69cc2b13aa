import type { JetStreamManager } from '@nats-io/jetstream'
import type { KV } from '@nats-io/kv'

/** How long a marker waits for every watch of the bucket to have been sent it before it is removed. */
const WATCHES_CATCH_UP_MS = 5000
const POLL_MS = 50

/**
 * Removes the delete marker a KV delete left under `key`, so the bucket keeps nothing under that key at all: a KV
 * delete (or purge) stores a marker whose subject is the key, which a watch needs to learn that the entry went. The
 * marker is removed (a purge of the key's subject in the bucket's stream, keeping nothing) only once every consumer
 * of the stream (each process's watch of the bucket) has been sent it, so no process keeps the deleted entry in
 * memory. Resolves `removed` when this removed a marker, `none` when the key holds nothing at all, and `kept` when the
 * key holds a value again or a watch did not reach the marker within WATCHES_CATCH_UP_MS (the marker stays).
 */
export async function forgetDeletedKey (jsm: JetStreamManager, kv: KV, key: string): Promise<'removed' | 'none' | 'kept'> {
  const status = await kv.status()
  const stream = status.streamInfo.config.name
  const wildcard = status.streamInfo.config.subjects?.[0] ?? `$KV.${status.bucket}.>`
  const subject = `${wildcard.slice(0, -1)}${key}`
  const marker = await jsm.streams.getMessage(stream, { last_by_subj: subject })
  if (marker === null) return 'none'
  const operation = marker.header?.get('KV-Operation')
  if (operation !== 'DEL' && operation !== 'PURGE') return 'kept'
  const deadline = Date.now() + WATCHES_CATCH_UP_MS
  for (;;) {
    let behind = false
    for await (const c of jsm.consumers.list(stream)) if (c.delivered.stream_seq < marker.seq) behind = true
    if (!behind) break
    if (Date.now() >= deadline) return 'kept'
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
  // `seq`: only what is below the marker's successor goes, so a value written under the key since then stays
  await jsm.streams.purge(stream, { filter: subject, seq: marker.seq + 1 })
  return 'removed'
}
