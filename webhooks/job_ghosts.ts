import type { Logger } from 'pino'
import { STREAM_WEBHOOK_JOBS, webhookJobConsumer, webhookJobShardFilter } from '../protocol/mod.ts'
import { releaseGhosts, releaseUnstored, type SweepIo } from '../stores/clients/mod.ts'

/** After a reconnect, passes once the restarted server has loaded its streams, then as the consumers move on. */
const AFTER_RECONNECT_MS = [3_000, 15_000, 45_000]

/**
 * Releases the job consumers' ghost entries: un-acknowledged entries for job messages the stream no longer stores,
 * which a killed nats-server 2.9 can leave behind (stores/clients/ghost_entries.ts). Nothing is delivered for them
 * and they are never acknowledged otherwise, so without this a consumer would count them as owed work for good. The
 * shard consumers are shared by every engine process, and each looks: at start, after each reconnect of its
 * connection (AFTER_RECONNECT_MS) and every `everyMs` (OB_ENGINE_SWEEP_MS). The first pass at start and after a
 * reconnect walks the newest sequences (releaseUnstored), since the same crash that leaves ghost entries also leaves
 * acknowledged jobs stored, which hide them from the counts, and nothing here can tell those jobs from waiting ones
 * to remove them; later passes go by the counts (releaseGhosts: three info requests per shard when they add up).
 * Only sequences the stream does not store are acknowledged, so no job is ever lost to it, and two processes
 * releasing at once do no harm.
 */
export class JobGhostRelease {
  private timer?: NodeJS.Timeout
  private stopped = false
  private running?: Promise<number>
  /** Counts schedules: a pass that ends reschedules only if no other schedule (a reconnect's) came meanwhile. */
  private generation = 0
  /** Reconnects seen, and up to which of them a walk has gone through every shard (-1: none since start). */
  private reconnects = 0
  private walkedFor = -1

  constructor (
    private readonly io: SweepIo,
    private readonly shards: number,
    private readonly everyMs: number,
    private readonly log: Logger
  ) {}

  start (): void {
    this.schedule(0, [])
    void (async () => {
      for await (const s of this.io.nc.status()) {
        if (this.stopped) break
        if (s.type !== 'reconnect') continue
        this.reconnects++
        this.schedule(AFTER_RECONNECT_MS[0]!, AFTER_RECONNECT_MS.slice(1))
      }
    })()
  }

  stop (): void {
    this.stopped = true
    clearTimeout(this.timer)
  }

  /** One pass over every shard's consumer (passes never overlap); resolves with how many entries were released. */
  async pass (): Promise<number> {
    while (this.running !== undefined) await this.running
    this.running = (async () => {
      const walkFor = this.reconnects
      const walk = this.walkedFor < walkFor
      let released = 0
      let failed = false
      for (let shard = 0; shard < this.shards && !this.stopped; shard++) {
        const t = { stream: STREAM_WEBHOOK_JOBS, consumer: webhookJobConsumer(shard), subject: webhookJobShardFilter(shard) }
        try {
          if (walk) {
            // how many entries fewer the consumer has afterwards: about, since it keeps working meanwhile
            const n = await releaseUnstored(this.io, t)
            if (n > 0) this.log.info({ shard, fewer: n }, 'acknowledged the newest webhook job sequences no longer stored')
            released += n
          } else {
            const n = await releaseGhosts(this.io, t)
            if (n > 0) this.log.warn({ shard, released: n }, 'released webhook job entries a NATS restart left without their messages')
            released += n
          }
        } catch (err) {
          failed = true
          this.log.warn({ err, shard }, 'webhook job consumer check failed; tried again later')
        }
      }
      // a reconnect during the walk still owes one of its own
      if (walk && !failed && !this.stopped) this.walkedFor = walkFor
      return released
    })().finally(() => { this.running = undefined })
    return await this.running
  }

  /** The next pass in `ms`, then one after each of `then`, then every `everyMs`. */
  private schedule (ms: number, then: readonly number[]): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    const generation = ++this.generation
    this.timer = setTimeout(() => {
      void this.pass().catch(() => 0).then(() => {
        if (generation === this.generation) this.schedule(then[0] ?? this.everyMs, then.slice(1))
      })
    }, ms)
    this.timer.unref()
  }
}
