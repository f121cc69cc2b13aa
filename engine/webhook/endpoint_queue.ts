/**
 * Work for one endpoint origin: at most `concurrency` attempts in flight, at most `maxWaiting` waiting.
 * Each endpoint has its own queue, so a slow or dead receiver only ever holds its own slots.
 */
export class EndpointQueue<T> {
  active = 0
  readonly waiting: T[] = []

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
      const next = this.waiting.shift()
      if (next !== undefined) this.start(next)
    })
  }

  get idle (): boolean {
    return this.active === 0 && this.waiting.length === 0
  }

  /** Takes every waiting item out (shutdown hands them back to the stream). */
  takeWaiting (): T[] {
    return this.waiting.splice(0)
  }
}
