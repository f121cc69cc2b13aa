import { ShardFences } from '../leases/fences.ts'
import type { RawMail, PooledDestination, SentInfo, TransportCache } from './transports.ts'

/** How often transactions in flight are checked against their shard's fence. */
const FENCE_WATCH_MS = 200
/** A transaction in flight this long when its shard's fence is closed is taken for stalled, by default. */
export const STALLED_AFTER_MS = 5_000

/**
 * How long after a process's fence closed every transaction it had in flight has ended, if the process runs: finished,
 * or reset as stalled (looked at every `FENCE_WATCH_MS`), with a moment for a reply to be recorded in the delivery
 * state. A process that takes over a shard whose lease ran out holds its repeats that long (engine/dispatcher.ts).
 */
export function flightsEndedWithinMs (stalledAfterMs: number): number {
  return stalledAfterMs + 2 * FENCE_WATCH_MS + 1_000
}

/** A transaction in flight: the shard whose mail it carries, the pool it goes through and when it was handed over. */
interface Flight { shard: number, pool: PooledDestination, since: number }

/**
 * A shard thread's SMTP transactions held to their shards' fences (engine/leases/fences.ts): none starts once the
 * shard's lease may have passed to another process, and one that has been in flight for `stalledAfterMs` with its
 * fence closed, on a pool that has answered nothing for as long, is reset. Without the fences (unset in
 * `ActorSettings`) every transaction may go.
 *
 * Why only stalled ones: a transaction that is moving finishes in moments and its reply is recorded at once in the
 * delivery state, which the shard's new owner reads before it sends; resetting it could lose a reply the receiver
 * had just given, and the new owner would send again. One that stalls (its link cut, its process frozen) would
 * finish only when the link or the process comes back, after the new owner sent the message. The new owner gets the
 * message only after JetStream's ack_wait, so `stalledAfterMs` is kept below it.
 *
 * A flight's time counts from when it was handed to its pool, so it includes the wait for one of the pool's
 * connections; what tells a stalled pool from a busy one is whether it answers. A fence also closes for a while on a
 * healthy process whose lease renewals wait on NATS (a node lost, its leaders being elected again): a pool that goes
 * on answering is then left alone, since a reset would end the transaction whose reply was on its way too.
 */
export class FencedSends {
  private readonly fences?: ShardFences
  private readonly flights = new Set<Flight>()
  /** When each pool last answered a transaction (a reply or an error), while it has flights. */
  private readonly answered = new Map<PooledDestination, number>()
  /** The watch's last look: a long gap since means this thread did not run (a frozen process), answers or not. */
  private lastLook = Date.now()
  private readonly watch?: NodeJS.Timeout

  constructor (fences: SharedArrayBuffer | undefined, private readonly transports: TransportCache,
    private readonly stalledAfterMs = STALLED_AFTER_MS) {
    if (fences === undefined) return
    this.fences = new ShardFences(fences)
    this.watch = setInterval(() => { this.resetMoved() }, FENCE_WATCH_MS)
    this.watch.unref()
  }

  /** Whether a transaction for the shard's mail may start now. */
  mayStart (shard: number): boolean {
    return this.fences?.open(shard) ?? true
  }

  /** One transaction through `pool`, watched while it is in flight. */
  async send (pool: PooledDestination, mail: RawMail, shard: number): Promise<SentInfo> {
    if (this.fences === undefined) return await pool.sendMail(mail)
    const flight: Flight = { shard, pool, since: Date.now() }
    this.flights.add(flight)
    try {
      return await pool.sendMail(mail)
    } finally {
      this.flights.delete(flight)
      if (pool.inFlight === 0) this.answered.delete(pool)
      else this.answered.set(pool, Date.now())
    }
  }

  close (): void {
    clearInterval(this.watch)
  }

  /**
   * Resets the pools carrying a stalled transaction whose shard's fence closed: bytes a cut link held back would
   * otherwise complete it once the link is back. The pool's other transactions fail too and are retried: a pool is
   * reset only when it has answered nothing for `stalledAfterMs`, or when this thread itself stood still as long.
   */
  private resetMoved (): void {
    const now = Date.now()
    // Woken after a freeze, the replies the kernel held are read before this look: they do not make a pool moving.
    const stood = now - this.lastLook >= this.stalledAfterMs
    this.lastLook = now
    if (this.flights.size === 0) return
    const reset = new Set<PooledDestination>()
    for (const f of this.flights) {
      if (reset.has(f.pool) || now - f.since < this.stalledAfterMs || this.fences!.open(f.shard, now)) continue
      if (stood || now - (this.answered.get(f.pool) ?? 0) >= this.stalledAfterMs) reset.add(f.pool)
    }
    for (const pool of reset) {
      this.answered.delete(pool)
      this.transports.reset(pool)
    }
  }
}
