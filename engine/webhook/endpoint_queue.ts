/** Waiting work beyond what the endpoint finishes in this long is not held for it at fan-out. */
const HOLD_MS = 1000
const UNPROVEN_CAPACITY = 500

/**
 * Work for one endpoint origin: at most `concurrency` attempts in flight, at most `maxWaiting` waiting.
 * Each endpoint has its own queue, so a slow or dead receiver only ever holds its own slots.
 */
export class EndpointQueue<T> {
  active = 0
  readonly waiting: T[] = []
  /** Completions in the current one-second window and in the one before it. */
  private windowStart = Date.now()
  private windowCount = 0
  private previousCount = 0
  private completions = 0
  private readonly createdAt = Date.now()

  constructor (private readonly concurrency: number, private readonly maxWaiting: number, private readonly run: (item: T) => Promise<void>) {}

  /** false when the endpoint is saturated and its queue is full: the caller hands the item back for later. */
  offer (item: T): boolean {
    if (this.active < this.concurrency) {
      this.start(item)
      return true
    }
    if (this.waiting.length >= this.maxWaiting) return false
    this.waiting.push(item)
    return true
  }

  private start (item: T): void {
    this.active++
    this.run(item).catch(() => {}).finally(() => {
      this.active--
      this.roll(Date.now())
      this.windowCount++
      this.completions++
      const next = this.waiting.shift()
      if (next !== undefined) this.start(next)
    })
  }

  private roll (now: number): void {
    const age = now - this.windowStart
    if (age < 1000) return
    this.previousCount = age < 2000 ? this.windowCount : 0
    this.windowCount = 0
    this.windowStart = now
  }

  /** Completions per second, from the last second or two; 0 once nothing has completed for two seconds. */
  ratePerS (now: number): number {
    this.roll(now)
    return Math.max(this.previousCount, (this.windowCount * 1000) / Math.max(250, now - this.windowStart))
  }

  /** A new endpoint whose pace is not known yet. */
  private unproven (now: number): boolean {
    return this.completions === 0 && now - this.createdAt < HOLD_MS
  }

  /**
   * What this endpoint contributes to the backpressure that paces the engine: its waiting work and the work
   * it finishes in about a second, or nothing when it finishes less than one round of its slots a second (a
   * slow or dead receiver, whose overflow waits in the job stream instead of holding healthy endpoints back).
   * A new endpoint whose pace is not known yet counts fully for its first second.
   */
  pacing (now: number): { waiting: number, capacity: number } {
    if (this.unproven(now)) return { waiting: this.waiting.length, capacity: UNPROVEN_CAPACITY }
    const rate = this.ratePerS(now)
    if (rate < this.concurrency) return { waiting: 0, capacity: 0 }
    const capacity = rate * (HOLD_MS / 1000)
    return { waiting: Math.min(this.waiting.length, capacity), capacity }
  }

  /** About a second of this endpoint's work, and never less than one round of its slots. */
  private holdable (now: number): number {
    return Math.max(this.concurrency, this.ratePerS(now) * (HOLD_MS / 1000))
  }

  /** Whether a first attempt may wait here rather than in the job stream. */
  canHold (now: number, max: number): boolean {
    return this.waiting.length < Math.min(max, this.holdable(now))
  }

  /** How long until the waiting queue has likely drained, for handing an overflowing item back to the stream. */
  retryLaterMs (now: number): number {
    if (this.unproven(now)) return 2000 // no measure of its pace yet
    const perS = this.ratePerS(now)
    if (perS < 0.05) return 30_000 // nothing finishes: a dead or very slow receiver
    return Math.min(60_000, Math.max(250, Math.round((this.waiting.length / perS) * 1000)))
  }

  get idle (): boolean {
    return this.active === 0 && this.waiting.length === 0
  }

  /** Takes every waiting item out (shutdown hands them back to the stream). */
  takeWaiting (): T[] {
    return this.waiting.splice(0)
  }
}
