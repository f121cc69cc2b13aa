/** A receiver that finished nothing for this long while all its slots are busy counts as stalled. */
const STALL_MS = 2000
const RATE_HALF_LIFE_MS = 1000

/**
 * Work for one endpoint origin: at most `concurrency` attempts in flight, at most `maxWaiting` waiting.
 * Each endpoint has its own queue, so a slow or dead receiver only ever holds its own slots.
 */
export class EndpointQueue<T> {
  active = 0
  readonly waiting: T[] = []
  private lastDoneAt = Date.now()
  /** Completed attempts per second, exponentially smoothed. */
  private rate = 0
  private rateAt = Date.now()

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
      this.completed()
      const next = this.waiting.shift()
      if (next !== undefined) this.start(next)
    })
  }

  private completed (): void {
    const now = Date.now()
    const dt = Math.max(1, now - this.rateAt)
    const keep = Math.pow(0.5, dt / RATE_HALF_LIFE_MS)
    this.rate = this.rate * keep + (1 - keep) * (1000 / dt)
    this.rateAt = now
    this.lastDoneAt = now
  }

  /** Busy with no completion for a while: a dead or very slow receiver, whose backlog must not hold others back. */
  stalled (now: number): boolean {
    return this.active >= this.concurrency && now - this.lastDoneAt > STALL_MS
  }

  /** How long until the waiting queue has likely drained, for handing an overflowing item back to the stream. */
  retryLaterMs (): number {
    if (this.rate === 0) return 5000 // nothing finished yet: no measure of its pace
    const perS = Math.max(this.rate, 0.05)
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
