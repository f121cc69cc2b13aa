import type { Redis } from 'ioredis'
import {
  LANES_KEY, connKey, laneId, normalizeLane, normalizeMember, parseLane, rateKey, throttleKey, waitKey, warmupKey, warmupPeriod
} from './keys.ts'
import { MAX_INDEXED_LANES, readSnapshot, throttleFrom } from './snapshot.ts'
import { withEgressScripts, type EgressPipeline, type EgressRedis } from './scripts.ts'
import {
  GO, clearThrottle, type LaneGate, type LaneRecovery, type LaneSnapshot, type LaneThrottle, type ReplyAction, type WaitReason
} from './types.ts'

/** How long a slowed lane takes to double its factor back (a lane at 1/64 is whole again after six): 10 min. */
export const RECOVER_EVERY_MS = 600_000
/** Slows within this long of the last one count once: the connections of a lane often hear one reply together. */
export const SLOW_QUIET_MS = 10_000
/** How long a throttle is kept after its effects end, so operators still see the last rule: 1 day. */
export const THROTTLE_KEEP_MS = 24 * 3_600_000
/** How long a warm-up count is kept after its day or hour ends: 1 h. */
export const WARMUP_KEEP_MS = 3_600_000
/** A waiting mark older than this belongs to a message nobody cleared (its engine died, it expired): 3 days. */
export const WAITING_MAX_AGE_MS = 3 * 24 * 3_600_000
/** The most waiting marks kept per lane; beyond it the depth reads as this number. */
export const MAX_WAITING_PER_LANE = 100_000
/** A lane unseen for this long leaves the index: 7 days. */
export const LANE_INDEX_KEEP_MS = 7 * 24 * 3_600_000
/** A gate whose Redis answered too slowly (connected, the command timed out) says wait this long: 1 s. */
export const SLOW_REDIS_WAIT_MS = 1000
const SLOW_REDIS_WAIT_RATE: LaneGate = Object.freeze({ kind: 'wait', ms: SLOW_REDIS_WAIT_MS, reason: 'rate' })
const SLOW_REDIS_WAIT_WARMUP: LaneGate = Object.freeze({ kind: 'wait', ms: SLOW_REDIS_WAIT_MS, reason: 'warmup' })
/** How often one EgressState marks a lane it uses as seen again: 1 min. */
const INDEX_EVERY_MS = 60_000

export interface EgressStateOptions {
  /** How long a slowed lane takes to double its factor back. @default 600_000 (RECOVER_EVERY_MS) */
  recoverEveryMs?: number
  /** Slows within this long of the last one count once. @default 10_000 (SLOW_QUIET_MS) */
  slowQuietMs?: number
  /** Hears every Redis failure the state answered around (it fails open); logging and metrics belong to the caller. */
  onError?: (err: unknown) => void
  /**
   * Hears the recovery steps of slowed lanes this instance claims: given, its sends, replies and snapshots claim the
   * steps a lane took since they were last claimed (in the same script, no extra round trip), so each step is heard
   * by one instance across the cluster, which logs and counts it. Without it, nothing is claimed (a reader for
   * operators, which must not take a step from the engines that report it).
   */
  onRecovery?: (recovery: LaneRecovery) => void
}

/**
 * The egress state of the cluster in Redis, shared by every engine process and shard thread: connection slots per
 * lane, the lane's rate (GCRA) scaled by its reply-driven throttle, a source's warm-up counts per provider, waiting
 * marks, and a snapshot for operators. Key layout in keys.ts; every decision is one atomic script on Redis's clock.
 *
 * Failure policy: shaping is a courtesy to receivers, not a reason to stop delivering (as DestinationThrottle in
 * engine/actor/throttle.ts). When Redis is unreachable or refuses a command (OOM when full included), every gate
 * answers `go`, acquireConnection answers true, throttle and applyReply answer a clear throttle, and renewals,
 * releases, refunds and waiting marks are dropped; `onError` hears each failure. Callers need a client that fails
 * fast (ioredis `commandTimeout`, as the engine's shard threads set it), or a gate waits as long as the client does.
 * A gate whose command timed out while the client is connected (Redis slow, not gone: a loaded host) says wait
 * SLOW_REDIS_WAIT_MS instead, and acquireConnection false: letting mail go then would exceed the limits cluster-wide.
 * Only snapshot, which is for operators, rejects. One exception when Redis is full: the connection slots keep
 * working, since their script first frees lapsed holders (a write a full Redis allows) and Redis then lets it finish;
 * a holder is a few dozen bytes, and the cap keeps holding.
 *
 * Every key expires: holders by their score and their set with its latest hold, GCRA keys when their bucket is full
 * again, throttles THROTTLE_KEEP_MS after their effects end, warm-up counts WARMUP_KEEP_MS after their period,
 * waiting marks WAITING_MAX_AGE_MS after the lane's last one, the lane index LANE_INDEX_KEEP_MS after its last use.
 */
export class EgressState {
  private readonly r: EgressRedis
  private readonly recoverEveryMs: number
  private readonly slowQuietMs: number
  private readonly onError: (err: unknown) => void
  private readonly onRecovery?: (recovery: LaneRecovery) => void
  /** '1' when this instance claims recovery steps (it has someone to tell), as the scripts take it. */
  private readonly claim: '0' | '1'
  /** When this instance last marked each lane as seen (its clock), so the index is written once a minute per lane. */
  private readonly indexed = new Map<string, number>()

  constructor (redis: Redis, private readonly clock: () => number = Date.now, options: EgressStateOptions = {}) {
    this.r = withEgressScripts(redis)
    this.recoverEveryMs = options.recoverEveryMs ?? RECOVER_EVERY_MS
    if (!(this.recoverEveryMs > 0)) throw new RangeError('recoverEveryMs must be above 0')
    this.slowQuietMs = Math.max(0, options.slowQuietMs ?? SLOW_QUIET_MS)
    this.onError = options.onError ?? (() => {})
    if (options.onRecovery !== undefined) this.onRecovery = options.onRecovery
    this.claim = options.onRecovery !== undefined ? '1' : '0'
  }

  /**
   * One more connection for this lane held by `holder` (unique per open connection) until ttlMs from now; false when
   * `max` are held cluster-wide (expired holders do not count). A holder that holds one already renews it. An
   * infinite `max` caps nothing (the holder still counts in the snapshot).
   */
  async acquireConnection (lane: string, holder: string, max: number, ttlMs: number): Promise<boolean> {
    const l = this.seen(lane)
    const cap = Number.isFinite(max) ? Math.max(0, Math.floor(max)) : -1
    try {
      return await this.r.ob_eg_acquire(connKey(l), normalizeMember(holder), cap, holdMs(ttlMs)) === 1
    } catch (err) {
      this.onError(err)
      if (!this.slow(err)) return true
      // the script may still run after the timeout: the slot it would take is given back behind it
      void this.releaseConnection(lane, holder)
      return false
    }
  }

  /** Extends every listed holder's hold (one round trip for many lanes). A hold that already lapsed is not renewed. */
  async renewConnections (held: ReadonlyArray<{ lane: string, holder: string }>, ttlMs: number): Promise<void> {
    if (held.length === 0) return
    const byLane = new Map<string, string[]>()
    for (const h of held) {
      const l = normalizeLane(h.lane)
      const holders = byLane.get(l) ?? []
      holders.push(normalizeMember(h.holder))
      byLane.set(l, holders)
    }
    const pipe = this.r.pipeline() as EgressPipeline
    for (const [l, holders] of byLane) pipe.ob_eg_renew(connKey(l), holdMs(ttlMs), ...holders)
    try {
      for (const [err] of await pipe.exec() ?? []) if (err !== null) this.onError(err)
    } catch (err) {
      this.onError(err)
    }
  }

  async releaseConnection (lane: string, holder: string): Promise<void> {
    await this.quietly(this.r.zrem(connKey(normalizeLane(lane)), normalizeMember(holder)))
  }

  /**
   * May one message go on this lane now? A pause or out waits until its end; then a GCRA at perMinute × the lane's
   * current factor (burst: one second's worth, at least 1). Consumes the send when 'go'. A perMinute of 0 (or not a
   * finite number) limits nothing but pauses and outs.
   */
  async takeSend (lane: string, perMinute: number): Promise<LaneGate> {
    const l = this.seen(lane)
    const rate = Number.isFinite(perMinute) && perMinute > 0 ? perMinute : 0
    try {
      const [ms, reason, from, to] = await this.r.ob_eg_send(throttleKey(l), rateKey(l, rate), rate, this.recoverEveryMs, this.claim) as
        [number, string, string?, string?]
      this.recovered(l, from, to)
      return ms === 0 ? GO : { kind: 'wait', ms, reason: reason as WaitReason }
    } catch (err) {
      this.onError(err)
      return this.slow(err) ? SLOW_REDIS_WAIT_RATE : GO
    }
  }

  /**
   * Gives back a send takeSend counted for a message that then did not go (every connection of the lane was open
   * elsewhere), so a lane whose connections are busy in other threads does not spend its rate on messages it never
   * sent. `perMinute` as given to takeSend. Best effort.
   */
  async refundSend (lane: string, perMinute: number): Promise<void> {
    const l = normalizeLane(lane)
    const rate = Number.isFinite(perMinute) && perMinute > 0 ? perMinute : 0
    if (rate === 0) return
    await this.quietly(this.r.ob_eg_send_refund(throttleKey(l), rateKey(l, rate), rate, this.recoverEveryMs))
  }

  /**
   * Counts one message against a source's warm-up allowance for a provider, per UTC day and hour of this host's
   * clock (the keys name the period), both checked and incremented atomically. 'go' consumes; 'wait' says until
   * the next hour or day. An allowance that is not a finite number limits nothing (the message is still counted).
   */
  async takeWarmup (source: string, provider: string, allowance: { perDay: number, perHour: number }): Promise<LaneGate> {
    const l = this.seen(laneId(source, provider))
    const p = warmupPeriod(this.clock())
    try {
      const ms = await this.r.ob_eg_wu_take(
        warmupKey(l, p.day), warmupKey(l, p.hour), limit(allowance.perDay), limit(allowance.perHour), p.msToNextDay, p.msToNextHour,
        WARMUP_KEEP_MS
      ) as number
      return ms === 0 ? GO : { kind: 'wait', ms, reason: 'warmup' }
    } catch (err) {
      this.onError(err)
      return this.slow(err) ? SLOW_REDIS_WAIT_WARMUP : GO
    }
  }

  /** Gives back a warm-up count of the current day and hour, taken for a message that then did not go. */
  async refundWarmup (source: string, provider: string): Promise<void> {
    const l = laneId(source, provider)
    const p = warmupPeriod(this.clock())
    await this.quietly(this.r.ob_eg_wu_refund(warmupKey(l, p.day), warmupKey(l, p.hour)))
  }

  /**
   * What a reply rule says about the lane: slow halves the factor (floor 1/64; slows within slowQuietMs of the last
   * count once), pause and out set their end (the later end wins). Returns the state after, and whether it changed.
   */
  async applyReply (lane: string, action: ReplyAction, rule: string): Promise<{ changed: boolean, throttle: LaneThrottle }> {
    const l = this.seen(lane)
    const ms = action.kind === 'slow' ? 0 : Math.max(0, Math.floor(action.ms))
    try {
      const r = await this.r.ob_eg_reply(
        throttleKey(l), action.kind, ms, rule.slice(0, 100), this.recoverEveryMs, this.slowQuietMs, THROTTLE_KEEP_MS, this.claim
      ) as unknown[]
      // steps the lane recovered before this reply came are told first, in the order they happened
      this.recovered(l, r[6], r[7])
      return { changed: r[0] === 1, throttle: throttleFrom(r.slice(1, 6)) }
    } catch (err) {
      this.onError(err)
      return { changed: false, throttle: clearThrottle() }
    }
  }

  /** The lane's throttle now, recovery applied. */
  async throttle (lane: string): Promise<LaneThrottle> {
    try {
      return throttleFrom(await this.r.ob_eg_throttle(throttleKey(normalizeLane(lane)), this.recoverEveryMs) as unknown[])
    } catch (err) {
      this.onError(err)
      return clearThrottle()
    }
  }

  /** Marks a message as waiting on the lane; its first mark stays. Best effort. */
  async noteWaiting (lane: string, messageId: string): Promise<void> {
    const l = this.seen(lane)
    await this.quietly(this.r.ob_eg_wait(waitKey(l), normalizeMember(messageId), WAITING_MAX_AGE_MS, MAX_WAITING_PER_LANE))
  }

  async clearWaiting (lane: string, messageId: string): Promise<void> {
    await this.quietly(this.r.zrem(waitKey(normalizeLane(lane)), normalizeMember(messageId)))
  }

  /** Every lane seen (at most MAX_INDEXED_LANES, sorted by id), in one pipeline. Rejects when Redis does not answer. */
  async snapshot (): Promise<LaneSnapshot[]> {
    const lanes = await readSnapshot(this.r, this.clock(), this.recoverEveryMs, WAITING_MAX_AGE_MS, this.claim)
    for (const l of lanes) if (l.recoveredFrom !== undefined) this.recovered(l.lane, String(l.recoveredFrom), String(l.throttle.factor))
    return lanes
  }

  /** Tells onRecovery of steps a script claimed (`from` '0' or absent: none). */
  private recovered (lane: string, from: unknown, to: unknown): void {
    const before = Number(from ?? 0)
    if (!(before > 0) || this.onRecovery === undefined) return
    try {
      this.onRecovery({ lane, ...parseLane(lane), from: before, to: Number(to) })
    } catch (err) {
      this.onError(err)
    }
  }

  /** The normalized lane; marks it as seen in the index when this instance has not for a minute (not awaited). */
  private seen (lane: string): string {
    const l = normalizeLane(lane)
    const now = this.clock()
    const last = this.indexed.get(l)
    if (last === undefined || now - last >= INDEX_EVERY_MS) {
      if (this.indexed.size >= MAX_INDEXED_LANES) this.indexed.clear()
      this.indexed.set(l, now)
      void this.quietly(this.r.ob_eg_index(LANES_KEY, l, MAX_INDEXED_LANES, LANE_INDEX_KEEP_MS))
    }
    return l
  }

  /**
   * Whether a failed gate command failed because Redis is slow rather than gone: the client is connected and the
   * command timed out (not an error reply such as OOM). A slow Redis is still keeping the cluster's counts, and a
   * timed-out script may yet run; letting the message go would exceed the lane's limits exactly when the machine is
   * busiest, so the gate says wait. An unreachable or refusing Redis fails open as documented above.
   */
  private slow (err: unknown): boolean {
    return this.r.status === 'ready' && !(err instanceof Error && err.name === 'ReplyError')
  }

  private async quietly (p: Promise<unknown>): Promise<void> {
    try {
      await p
    } catch (err) {
      this.onError(err)
    }
  }
}

/** A hold of at least 1 ms, in whole ms. */
function holdMs (ttlMs: number): number {
  return Math.max(1, Math.ceil(Number.isFinite(ttlMs) ? ttlMs : 1))
}

/** An allowance as the warm-up script takes it: -1 for none. */
function limit (n: number): number {
  return Number.isFinite(n) ? Math.max(0, Math.floor(n)) : -1
}
