import { limitsFor, warmupAllowance, type EgressGates, type LaneGate, type LaneLimits } from './egress_types.ts'
import { laneOf, type TaskEgress, type TaskSource } from './task_egress.ts'

export type WaitReason = Extract<LaneGate, { kind: 'wait' }>['reason']

/** Where one recipient's mail goes out, or how long it waits (no attempt, no event) before it is tried again. */
export type EgressPick =
  | { kind: 'go', source: TaskSource, lane: string, provider: string, limits: LaneLimits, warmupCounted: boolean }
  | { kind: 'wait', ms: number, reason: WaitReason, lane: string }

/** Lanes known to be paused or out, skipped without asking Redis until this long before their end. */
const MAX_KNOWN_STOPS = 10_000

/**
 * Chooses the source of a message's pool for one recipient's provider, in the shard's thread. Sources are tried in
 * an order drawn by weight (each draw a weighted shuffle, so traffic splits by weight); a source goes when its
 * warm-up allowance for the provider has room and the lane's rate (its limit, the source's own override if it has
 * one, times the throttle factor the replies set) admits the message now. A source that cannot take it is passed
 * over for the next; when none can, the message waits for the earliest of them. Nothing here is an attempt: a wait
 * spends nothing of the retry schedule.
 */
export class EgressRouter {
  /** lane → until (ms) it is paused or out: learned from the gates, so a stopped lane costs no round trip. */
  private readonly stopped = new Map<string, { until: number, reason: WaitReason }>()

  constructor (
    private readonly gates: EgressGates,
    private readonly random: () => number = Math.random,
    private readonly now: () => number = Date.now
  ) {}

  async pick (provider: string, egress: TaskEgress, exclude?: ReadonlySet<string>): Promise<EgressPick> {
    // the installation's limits for the provider, worked out once; a source with overrides of its own gets its own
    const shared = limitsFor(provider, egress.limits)
    let wait: { ms: number, reason: WaitReason, lane: string } | undefined
    const note = (ms: number, reason: WaitReason, lane: string): void => {
      if (wait === undefined || ms < wait.ms) wait = { ms, reason, lane }
    }
    for (const source of this.order(egress.sources)) {
      if (exclude?.has(source.name) === true) continue
      const lane = laneOf(source.name, provider)
      const known = this.stopped.get(lane)
      const now = this.now()
      if (known !== undefined) {
        if (known.until > now) { note(known.until - now, known.reason, lane); continue }
        this.stopped.delete(lane)
      }
      const limits = source.limits === undefined ? shared : limitsFor(provider, egress.limits, source.limits)
      const gate = await this.admit(source, provider, lane, limits)
      if (gate.kind === 'go') return { kind: 'go', source, lane, provider, limits, warmupCounted: gate.warmupCounted }
      if (gate.reason === 'paused' || gate.reason === 'out') this.remember(lane, now + gate.ms, gate.reason)
      note(gate.ms, gate.reason, lane)
    }
    return wait === undefined
      ? { kind: 'wait', ms: 1000, reason: 'out', lane: laneOf(egress.sources[0]?.name ?? 'host', provider) }
      : { kind: 'wait', ...wait }
  }

  /** Warm-up first (counted per source and provider), then the lane's rate; a warm-up count taken is given back on a wait. */
  private async admit (source: TaskSource, provider: string, lane: string, limits: LaneLimits):
  Promise<Extract<LaneGate, { kind: 'wait' }> | { kind: 'go', warmupCounted: boolean }> {
    const allowance = source.warmup === undefined ? undefined : warmupAllowance(source.warmup.startedAtMs, this.now(), source.warmup.steps)
    if (allowance !== undefined) {
      const w = await this.gates.takeWarmup(source.name, provider, allowance)
      if (w.kind === 'wait') return w
    }
    const r = await this.gates.takeSend(lane, limits.messagesPerMinute)
    if (r.kind === 'wait' && allowance !== undefined) await this.gates.refundWarmup(source.name, provider)
    return r.kind === 'wait' ? r : { kind: 'go', warmupCounted: allowance !== undefined }
  }

  private remember (lane: string, until: number, reason: WaitReason): void {
    if (this.stopped.size >= MAX_KNOWN_STOPS) this.stopped.clear()
    this.stopped.set(lane, { until, reason })
  }

  /** The sources in a weighted random order (Efraimidis–Spirakis: each keyed by random^(1/weight), highest first). */
  private order (sources: readonly TaskSource[]): readonly TaskSource[] {
    if (sources.length === 1) return sources
    return sources
      .map((s) => ({ s, k: Math.pow(this.random(), 1 / Math.max(1, s.weight)) }))
      .sort((a, b) => b.k - a.k)
      .map((x) => x.s)
  }
}
