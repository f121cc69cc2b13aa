import type { ConsumerInfo, JetStreamManager, StoredMsg } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'

/**
 * Ghost entries: un-acknowledged entries a consumer keeps for messages its work-queue stream no longer stores.
 *
 * nats-server 2.9 writes a consumer's acknowledgements and the stream's removals of acknowledged messages at
 * different moments. When it is killed between the two, the consumer can come back counting as un-acknowledged
 * messages the stream has already removed. Nothing is ever delivered for them (there is nothing to deliver), so
 * `num_ack_pending` never comes down and they hold the consumer's ack floor back for good.
 *
 * Releasing one means acknowledging, for the consumer, a sequence that a look-up by sequence finds not stored.
 * Such an acknowledgement removes nothing, and the consumer drops the entry if it has one: a sequence not stored
 * is never work, so releasing is safe while the consumer keeps working and when several processes do it at once.
 * A stored message is never acknowledged here.
 */

/** The connection ghost entries are acknowledged on, and its JetStream manager. */
export interface SweepIo {
  nc: NatsConnection
  jsm: JetStreamManager
}

export interface GhostTarget {
  stream: string
  consumer: string
  /** The consumer's filter subject; wildcards allowed (the stored messages of every subject it matches are counted). */
  subject: string
  /** Most sequences one release looks at. */
  limit?: number
}

const LOOK_LIMIT = 50_000
const RELEASE_BATCH = 128 // sequences looked up at once while looking for ghost entries
const SNAPSHOT_TRIES = 5
const ACK = new TextEncoder().encode('+ACK')

/**
 * Releases ghost entries when the consumer counts more un-acknowledged entries than the subject has stored
 * messages it delivered. They are looked for from the last delivered sequence down, since a crash leaves them
 * among the newest; each sequence found not stored is acknowledged for the consumer, until the count adds up.
 * Resolves with how many entries the consumer dropped.
 */
export async function releaseGhosts (io: SweepIo, t: GhostTarget): Promise<number> {
  const first = await ghostCount(io.jsm, t)
  if (first === undefined || first.ghosts <= 0) return 0
  const floor = first.consumer.ack_floor.stream_seq
  let last = first
  let seq = first.consumer.delivered.stream_seq
  for (let looked = 0; seq > floor && looked < (t.limit ?? LOOK_LIMIT); looked += RELEASE_BATCH) {
    const top = seq
    const batch = Array.from({ length: Math.min(RELEASE_BATCH, top - floor) }, (_v, i) => top - i)
    seq -= batch.length
    const stored = await Promise.all(batch.map(async (s) => await io.jsm.streams.getMessage(t.stream, { seq: s })))
    batch.forEach((s, i) => { if (stored[i] === null) io.nc.publish(ackSubject(t, s), ACK) })
    await io.nc.flush()
    const now = await ghostCount(io.jsm, t)
    if (now === undefined) continue
    last = now
    if (now.ghosts <= 0) break
  }
  return Math.max(0, first.ghosts - Math.max(0, last.ghosts))
}

/**
 * Acknowledges, for the consumer, every sequence among the last `limit` up to its last delivered one (and above its ack
 * floor) that the stream does not store, whatever the counts say: releaseGhosts cannot see ghost entries while as
 * many acknowledged messages are still stored on the consumer's subjects, and the same crash leaves both (the walk
 * removes nothing, so those stay). The walk jumps from one stored message to the next: its look-ups are the stored
 * messages in the range, and every sequence between two of them is not stored. It asks for the next message on `>`,
 * which nats-server 2.9 answers by reading its message blocks one message after the other, not through its
 * per-subject index, which the same crash can leave without some stored messages (an acknowledgement of such a
 * message, taken for not stored, would remove it). Resolves with how many un-acknowledged entries the consumer has
 * fewer afterwards (about: the consumer keeps working meanwhile).
 */
export async function releaseUnstored (io: SweepIo, t: GhostTarget): Promise<number> {
  const before = await io.jsm.consumers.info(t.stream, t.consumer)
  if (before.num_ack_pending === 0) return 0
  const top = before.delivered.stream_seq
  let seq = Math.max(before.ack_floor.stream_seq, top - (t.limit ?? LOOK_LIMIT)) + 1
  while (seq <= top) {
    const next = await storedFrom(io.jsm, t.stream, '>', seq)
    const end = next === null ? top + 1 : Math.min(next.seq, top + 1)
    for (let s = seq; s < end; s++) io.nc.publish(ackSubject(t, s), ACK)
    seq = end + 1
  }
  await io.nc.flush()
  const after = await io.jsm.consumers.info(t.stream, t.consumer)
  return Math.max(0, before.num_ack_pending - after.num_ack_pending)
}

/** The first message stored at or after `seq` on a subject `filter` matches (wildcards allowed), or null. */
async function storedFrom (jsm: JetStreamManager, stream: string, filter: string, seq: number): Promise<StoredMsg | null> {
  // `next_by_subj` is answered by nats-server 2.9 and later; the client's type lists it only for direct gets
  const query = { seq, next_by_subj: filter } as unknown as { seq: number }
  return await jsm.streams.getMessage(stream, query)
}

/**
 * Un-acknowledged entries beyond the subject's stored messages the consumer delivered, from consumer infos taken
 * just before and after the stream's count that agree (the consumer keeps working meanwhile); undefined when no
 * two agreed. Stored messages the consumer counts as acknowledged hide as many ghosts.
 */
async function ghostCount (jsm: JetStreamManager, t: GhostTarget): Promise<{ ghosts: number, consumer: ConsumerInfo } | undefined> {
  for (let i = 0; i < SNAPSHOT_TRIES; i++) {
    const a = await jsm.consumers.info(t.stream, t.consumer)
    const s = await jsm.streams.info(t.stream, { subjects_filter: t.subject })
    const b = await jsm.consumers.info(t.stream, t.consumer)
    const moved = a.num_ack_pending !== b.num_ack_pending || a.num_pending !== b.num_pending ||
      a.delivered.stream_seq !== b.delivered.stream_seq
    if (moved) continue
    const stored = Object.values(s.state.subjects ?? {}).reduce((n, k) => n + k, 0)
    return { ghosts: b.num_ack_pending - (stored - b.num_pending), consumer: b }
  }
  return undefined
}

/**
 * The subject JetStream gives a delivery for its acknowledgement: `$JS.ACK.<stream>.<consumer>.<delivery count>.
 * <stream seq>.<consumer seq>.<timestamp>.<pending>`. Consumer sequence 0 lets the consumer take the one of its
 * entry, so an entry's acknowledgement moves the ack floor as the consumer's own would.
 */
function ackSubject (t: GhostTarget, seq: number): string {
  return `$JS.ACK.${t.stream}.${t.consumer}.1.${seq}.0.0.0`
}
