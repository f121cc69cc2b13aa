/**
 * What `flush` gives an item in place of its result when that item alone failed: its caller rejects with `reason`,
 * the other items of the batch keep their results.
 */
export class ItemFailure {
  constructor (readonly reason: unknown) {}
}

export interface TurnBatchOptions<T, R> {
  /**
   * Sends one batch, in the order the items were added. Called synchronously when the batch leaves, so what it
   * writes leaves ahead of anything issued later. Resolves with one result per item, in the same order; a rejection
   * (or a throw) rejects every caller of that batch with the same error.
   */
  flush: (items: T[]) => Promise<ReadonlyArray<R | ItemFailure>>
  /** Items that make a batch leave at once, without waiting. @default Infinity */
  maxItems?: number
  /**
   * What a batch may weigh (bytes, say), by `weigh`: an item that would take the batch past it sends the batch
   * gathered so far first and starts the next one; one that brings it to the limit sends it at once.
   * @default Infinity
   */
  maxWeight?: number
  /** An item's weight toward `maxWeight`. @default every item weighs 0 */
  weigh?: (item: T) => number
  /**
   * When a gathered batch leaves. `'turn'`: at the end of the current turn of the event loop (setImmediate, which
   * runs after the poll phase, so every request, reply or message read in this turn joins the batch). A number:
   * that many milliseconds after its first item (a timer), which gathers across turns; for callers that do not
   * wait on the result (a write after the reply has gone), where a larger batch is worth a few milliseconds.
   * Not a microtask: one would run before the rest of the turn's socket reads were handled, and batch nothing.
   * @default 'turn'
   */
  after?: 'turn' | number
}

type Waiter<R> = { resolve: (r: R) => void, reject: (err: unknown) => void }

/**
 * Gathers the items added in one turn of the event loop (or within a few milliseconds, see `after`) and sends
 * them in one `flush`: one round trip (a Redis script, a transaction, a thread hand-off) for a batch instead of
 * one per item. Each `add` resolves with its item's result. The batch leaves early when it reaches `maxItems`.
 */
export class TurnBatch<T, R> {
  private items: T[] = []
  /** One per item: none for an item `push`ed without waiting for its result. */
  private waiters: Array<Waiter<R> | undefined> = []
  private timer: NodeJS.Immediate | NodeJS.Timeout | undefined
  private readonly sending = new Set<Promise<unknown>>()
  private readonly flushFn: (items: T[]) => Promise<ReadonlyArray<R | ItemFailure>>
  private readonly maxItems: number
  private readonly maxWeight: number
  private readonly weigh: ((item: T) => number) | undefined
  private weight = 0
  private readonly after: 'turn' | number
  private readonly flushNow = (): void => { this.flush() }

  constructor (options: TurnBatchOptions<T, R>) {
    this.flushFn = options.flush
    this.maxItems = options.maxItems ?? Infinity
    this.maxWeight = options.maxWeight ?? Infinity
    this.weigh = options.weigh
    this.after = options.after ?? 'turn'
  }

  /** Items gathered and not sent yet. */
  get pending (): number {
    return this.items.length
  }

  /** Adds an item to the batch being gathered; resolves with its result once the batch is sent. */
  async add (item: T): Promise<R> {
    return await new Promise<R>((resolve, reject) => {
      this.take(item, { resolve, reject })
    })
  }

  private take (item: T, waiter: Waiter<R> | undefined): void {
    if (this.weigh !== undefined) {
      const w = this.weigh(item)
      if (this.items.length > 0 && this.weight + w > this.maxWeight) this.flush()
      this.weight += w
    }
    this.items.push(item)
    this.waiters.push(waiter)
    this.schedule()
  }

  private schedule (): void {
    if (this.items.length >= this.maxItems || this.weight >= this.maxWeight) this.flush()
    else if (this.timer === undefined) {
      this.timer = this.after === 'turn' ? setImmediate(this.flushNow) : setTimeout(this.flushNow, this.after)
    }
  }

  /**
   * Adds an item whose result nobody waits for (an acknowledgement, say): no promise is made for it, and a failed
   * batch is the flush's own to report.
   */
  push (item: T): void {
    this.take(item, undefined)
  }

  /** Sends what is gathered now (nothing when nothing is). */
  flush (): void {
    this.cancelTimer()
    const items = this.items
    if (items.length === 0) return
    const waiters = this.waiters
    this.items = []
    this.waiters = []
    this.weight = 0
    let sent: Promise<ReadonlyArray<R | ItemFailure>>
    try {
      sent = this.flushFn(items)
    } catch (err) {
      sent = Promise.reject(err)
    }
    const settled = sent.then((results) => {
      waiters.forEach((w, i) => {
        const r = results[i]
        if (w === undefined) return
        if (r instanceof ItemFailure) w.reject(r.reason)
        else w.resolve(r as R)
      })
    }, (err: unknown) => { for (const w of waiters) w?.reject(err) })
    this.sending.add(settled)
    void settled.finally(() => this.sending.delete(settled))
  }

  /** Sends what is gathered and waits until every batch sent so far is answered. */
  async close (): Promise<void> {
    this.flush()
    await Promise.all([...this.sending])
  }

  private cancelTimer (): void {
    if (this.timer === undefined) return
    if (this.after === 'turn') clearImmediate(this.timer as NodeJS.Immediate)
    else clearTimeout(this.timer as NodeJS.Timeout)
    this.timer = undefined
  }
}
