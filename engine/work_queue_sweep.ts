import { type ConsumerInfo, type JetStreamManager, type StoredMsg } from '@nats-io/jetstream'
import { deleteIfStored, releaseGhosts, type SweepIo } from '../stores/clients/mod.ts'

/**
 * What a killed nats-server can leave behind in a work-queue stream, and how the engine clears it.
 *
 * nats-server 2.9 writes a consumer's acknowledgements and the stream's removals of acknowledged messages at
 * different moments. When it is killed between the two, after the restart
 * - acknowledged messages can still be stored: below the consumer's ack floor, or above it where the consumer
 *   counts them as acknowledged. They are never delivered again, but the stream keeps them;
 * - the consumer can keep counting as un-acknowledged messages the stream has already removed ("ghost" entries,
 *   stores/clients/ghost_entries.ts). Nothing is ever delivered for them, `num_ack_pending` never comes down, and
 *   they hold the ack floor back.
 * Neither is mail waiting. What the sweep may do, and why it is safe while the shard's consumer keeps working:
 * - it removes a stored message only when `settled` says every recipient has a final outcome in Redis. The ack
 *   floor is no proof: a deferred or scheduled message waits as an un-acknowledged entry, and the floor can pass
 *   such an entry (an acknowledgement of a message no longer pending moves it without looking below);
 * - it releases a ghost entry by acknowledging, for the consumer, a sequence that a look-up by sequence finds
 *   not stored (releaseGhosts); a stored message is never acknowledged by the sweep;
 * - it never purges. A filtered purge on nats-server 2.9.10 drops every un-acknowledged entry of the consumers
 *   of that subject, below and above the purge sequence: the deferred and scheduled messages it was holding
 *   stay stored and are never delivered again.
 */
export interface SweepResult {
  /** Stored messages that were done and are now removed. */
  readonly removed: number
  /** Un-acknowledged entries of messages no longer stored that the consumer dropped. */
  readonly released: number
}

export interface SweepTarget {
  stream: string
  consumer: string
  subject: string
  /** Whether every recipient of a stored message has its final outcome: only then is the message removed. */
  settled: (data: Uint8Array) => Promise<boolean>
  /**
   * Full: judges every stored message up to the consumer's last delivered one (those that wait for a retry or
   * their schedule, too). Light: only those at or below the ack floor, normally none (one look-up).
   */
  full: boolean
  /** Most stored messages a full sweep reads, and most sequences one sweep looks at for ghost entries. */
  limit?: number
}

const SWEEP_LIMIT = 50_000

export async function sweepWorkQueue (io: SweepIo, t: SweepTarget): Promise<SweepResult> {
  const before = await io.jsm.consumers.info(t.stream, t.consumer)
  const visible = await removeSettled(io.jsm, t, before)
  let removed = visible.removed
  if (t.full) removed += await removeUnindexed(io.jsm, t, before, visible.kept)
  return { removed, released: await releaseGhosts(io, t) }
}

/**
 * Walks the subject's stored messages up to the ack floor (light) or the last delivered one (full), removing
 * the settled ones. `kept`: those left.
 */
async function removeSettled (jsm: JetStreamManager, t: SweepTarget, c: ConsumerInfo): Promise<{ removed: number, kept: Set<number> }> {
  const last = t.full ? c.delivered.stream_seq : c.ack_floor.stream_seq
  const kept = new Set<number>()
  let removed = 0
  let m = await storedFrom(jsm, t.stream, t.subject, 1)
  for (let read = 0; m !== null && m.seq <= last && read < (t.limit ?? SWEEP_LIMIT); read++) {
    if (await t.settled(m.data)) removed += await remove(jsm, t.stream, m.seq)
    else kept.add(m.seq)
    m = await storedFrom(jsm, t.stream, t.subject, m.seq + 1)
  }
  return { removed, kept }
}

/**
 * The same crash can drop messages from nats-server 2.9's per-subject index: they stay stored and counted, but
 * no look-up by subject finds them. When the subject counts more messages than the walk saw, they are looked
 * for by sequence, from the oldest stored message to the last delivered one.
 */
async function removeUnindexed (jsm: JetStreamManager, t: SweepTarget, c: ConsumerInfo, kept: ReadonlySet<number>): Promise<number> {
  const info = await jsm.streams.info(t.stream, { subjects_filter: t.subject })
  const counted = info.state.subjects?.[t.subject] ?? 0
  const after = await jsm.consumers.info(t.stream, t.consumer)
  let hidden = counted - kept.size - after.num_pending
  if (hidden <= 0) return 0
  const last = Math.min(c.delivered.stream_seq, info.state.first_seq + (t.limit ?? SWEEP_LIMIT))
  let removed = 0
  for (let seq = info.state.first_seq; seq <= last && hidden > 0; seq++) {
    if (kept.has(seq)) continue
    const m = await jsm.streams.getMessage(t.stream, { seq })
    if (m === null || m.subject !== t.subject) continue
    hidden--
    if (await t.settled(m.data)) removed += await remove(jsm, t.stream, seq)
  }
  return removed
}

/** 1 when the message was removed, 0 when it was gone already (acknowledged meanwhile). */
async function remove (jsm: JetStreamManager, stream: string, seq: number): Promise<number> {
  return (await deleteIfStored(jsm, stream, seq)) ? 1 : 0
}

async function storedFrom (jsm: JetStreamManager, stream: string, subject: string, seq: number): Promise<StoredMsg | null> {
  // `next_by_subj` is answered by nats-server 2.9 and later; the client's type lists it only for direct gets
  const query = { seq, next_by_subj: subject } as unknown as { seq: number }
  return await jsm.streams.getMessage(stream, query)
}

/** After a reconnect, full sweeps: once the restarted server has loaded its streams, then as the backlog moves on. */
const AFTER_RECONNECT_MS = [3_000, 15_000, 45_000]

export interface SweeperDeps {
  io: SweepIo
  /** Period of the light passes (OB_ENGINE_SWEEP_MS). */
  everyMs: number
  stream: string
  /** Consumer name and subject of a shard. */
  target: (shard: number) => { consumer: string, subject: string }
  /** The shards this process holds now: a shard is swept by its holder only. */
  shards: () => readonly number[]
  settled: (data: Uint8Array) => Promise<boolean>
  /** Yields on each reconnect of the NATS connection; ends when the connection closes. */
  reconnects: AsyncIterable<unknown>
  onSwept: (shard: number, r: SweepResult) => void
  onError: (shard: number, err: unknown) => void
}

/**
 * Sweeps the held shards: fully at start, after every reconnect (AFTER_RECONNECT_MS) and when a light pass
 * found leftovers; lightly every `everyMs` otherwise; until `stop()`.
 */
export class WorkQueueSweeper {
  private timer?: NodeJS.Timeout
  private stopped = false
  private running?: Promise<void>

  constructor (private readonly d: SweeperDeps) {}

  start (): void {
    this.schedule(0, true, [])
    void (async () => {
      for await (const _ of this.d.reconnects) {
        if (this.stopped) break
        this.schedule(AFTER_RECONNECT_MS[0]!, true, AFTER_RECONNECT_MS.slice(1))
      }
    })()
  }

  stop (): void {
    this.stopped = true
    clearTimeout(this.timer)
  }

  /** One pass over the held shards; passes never overlap. Resolves with whether anything was left behind. */
  async sweep (full: boolean): Promise<boolean> {
    while (this.running !== undefined) await this.running
    let found = false
    this.running = (async () => {
      for (const shard of this.d.shards()) {
        if (this.stopped) return
        const t = this.d.target(shard)
        try {
          const r = await sweepWorkQueue(this.d.io, { stream: this.d.stream, ...t, settled: this.d.settled, full })
          if (r.removed > 0 || r.released > 0) {
            found = true
            this.d.onSwept(shard, r)
          }
        } catch (err) {
          this.d.onError(shard, err)
        }
      }
    })().finally(() => { this.running = undefined })
    await this.running
    return found
  }

  /** The next pass in `ms`, full ones after each of `fullThen`, then light ones every `everyMs`. */
  private schedule (ms: number, full: boolean, fullThen: readonly number[]): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      void this.sweep(full).catch(() => false).then((found) => {
        if (fullThen.length > 0) this.schedule(fullThen[0]!, true, fullThen.slice(1))
        // what a light pass finds below the floor says there may be more above it
        else if (found && !full) this.schedule(0, true, [])
        else this.schedule(this.d.everyMs, false, [])
      })
    }, ms)
    this.timer.unref()
  }
}
