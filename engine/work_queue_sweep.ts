import type { ConsumerInfo, JetStreamManager, StoredMsg } from '@nats-io/jetstream'

/**
 * What a killed nats-server can leave behind in a work-queue stream, and how the engine clears it.
 *
 * nats-server 2.9 writes a consumer's acknowledgements and the stream's removals of acknowledged messages at
 * different moments. When it is killed between the two, after the restart
 * - acknowledged messages can still be stored: below the consumer's ack floor, or above it where the consumer
 *   counts them as acknowledged. They are never delivered again, but the stream keeps them;
 * - the consumer can keep counting as un-acknowledged messages the stream has already removed. Nothing is ever
 *   delivered for them, `num_ack_pending` never comes down, and they hold the ack floor back.
 * Neither is mail waiting. A sweep of one shard's subject removes the stored messages that are done (at or below
 * the ack floor, or with a final outcome for every recipient: `settled`), then purges the subject below the first
 * message still stored above the floor, which drops the consumer's pending entries below it: only stored messages
 * can be really pending, and none is stored there.
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
  /**
   * Whether a stored message above the ack floor is done (it is then removed). Called only in a full sweep;
   * a light one removes only what is at or below the floor.
   */
  settled?: (data: Uint8Array) => Promise<boolean>
  /** Most stored messages a full sweep reads. */
  limit?: number
}

const FULL_SWEEP_LIMIT = 50_000

/**
 * Sweeps one consumer's subject. Light (no `settled`): two look-ups when nothing was left behind. Full: reads
 * each stored message up to the consumer's last delivered one (the messages that wait for a retry, too).
 */
export async function sweepWorkQueue (jsm: JetStreamManager, t: SweepTarget): Promise<SweepResult> {
  const before = await jsm.consumers.info(t.stream, t.consumer)
  const visible = await removeDone(jsm, t, before)
  let removed = visible.removed
  if (t.settled !== undefined) removed += await removeUnindexed(jsm, t, before, visible.kept)
  const after = removed > 0 ? await jsm.consumers.info(t.stream, t.consumer) : before
  // more pending entries than stored candidates for them: some are of removed messages
  if (after.num_ack_pending <= visible.kept.size) return { removed, released: 0 }
  const live = visible.live ?? (await jsm.streams.info(t.stream)).state.last_seq + 1
  if (live <= after.ack_floor.stream_seq + 1) return { removed, released: 0 }
  await jsm.streams.purge(t.stream, { filter: t.subject, seq: live })
  const end = await jsm.consumers.info(t.stream, t.consumer)
  return { removed, released: Math.max(0, after.num_ack_pending - end.num_ack_pending) }
}

/**
 * Walks the subject's stored messages up to the last delivered one, removing those at or below the ack floor
 * and (full sweep) the settled ones. `kept`: the delivered messages left, which may really be pending; `live`:
 * the first stored message above the floor.
 */
async function removeDone (jsm: JetStreamManager, t: SweepTarget, c: ConsumerInfo): Promise<{ removed: number, kept: Set<number>, live?: number }> {
  const floor = c.ack_floor.stream_seq
  const kept = new Set<number>()
  let firstKept: number | undefined // the walk goes up by sequence, so the first one kept is the lowest
  let removed = 0
  let m = await storedFrom(jsm, t.stream, t.subject, 1)
  for (let read = 0; m !== null; read++) {
    if (m.seq > c.delivered.stream_seq || (m.seq > floor && (t.settled === undefined || read >= (t.limit ?? FULL_SWEEP_LIMIT)))) {
      return { removed, kept, live: firstKept ?? m.seq }
    }
    if (m.seq <= floor || await t.settled!(m.data)) {
      await jsm.streams.deleteMessage(t.stream, m.seq, false)
      removed++
    } else {
      kept.add(m.seq)
      firstKept ??= m.seq
    }
    m = await storedFrom(jsm, t.stream, t.subject, m.seq + 1)
  }
  return firstKept !== undefined ? { removed, kept, live: firstKept } : { removed, kept }
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
  const last = Math.min(c.delivered.stream_seq, info.state.first_seq + (t.limit ?? FULL_SWEEP_LIMIT))
  let removed = 0
  for (let seq = info.state.first_seq; seq <= last && hidden > 0; seq++) {
    if (kept.has(seq)) continue
    const m = await jsm.streams.getMessage(t.stream, { seq }).catch(() => null)
    if (m === null || m.subject !== t.subject) continue
    hidden--
    if (seq <= c.ack_floor.stream_seq || await t.settled!(m.data)) {
      await jsm.streams.deleteMessage(t.stream, seq, false)
      removed++
    }
  }
  return removed
}

async function storedFrom (jsm: JetStreamManager, stream: string, subject: string, seq: number): Promise<StoredMsg | null> {
  // `next_by_subj` is answered by nats-server 2.9 and later; the client's type lists it only for direct gets
  const query = { seq, next_by_subj: subject } as unknown as { seq: number }
  return await jsm.streams.getMessage(stream, query)
}

/** After a reconnect, full sweeps: once the restarted server has loaded its streams, then as the backlog moves on. */
const AFTER_RECONNECT_MS = [3_000, 15_000, 45_000]

export interface SweeperDeps {
  jsm: JetStreamManager
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
          const r = await sweepWorkQueue(this.d.jsm, { stream: this.d.stream, ...t, ...(full ? { settled: this.d.settled } : {}) })
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
