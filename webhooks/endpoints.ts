import { EndpointQueue } from './endpoint_queue.ts'
import type { Settle } from './settle.ts'

/** Jobs waiting per endpoint beyond those in flight; more are handed back to the stream until it catches up. */
const MAX_WAITING_PER_ENDPOINT = 1000
/** Jobs waiting at endpoints that keep pace; above it (or a second of their work) the engine stops taking work. */
const MAX_MOVING_BACKLOG = 128
/** The backlog is summed again after this many accepted jobs or this long, whichever comes first. */
const BACKLOG_CHECK_JOBS = 32
const BACKLOG_CHECK_MS = 5
/** Parsed webhook URLs kept; past this many the cache starts over. */
const MAX_URLS = 10_000

/** Where a webhook's attempts go: its URL, parsed once, and its endpoint's queue. */
export interface EndpointTarget<T> {
  url: URL
  queue: EndpointQueue<T>
}

/** How long work an endpoint cannot take now waits in the job stream: until it likely has room, spread by up to half. */
export function handBackMs (q: Pick<EndpointQueue<unknown>, 'retryLaterMs'>, now: number): number {
  return Math.round(q.retryLaterMs(now) * (1 + Math.random() * 0.5))
}

/**
 * Every endpoint queue of the process, and the backpressure they exert together. An endpoint is an organisation's
 * endpoint origin: each organisation has its own queue and slots for an origin (and its own connections, see
 * WebhookHttpClient), so a receiver that one organisation points at a host shared with others (an integration hub)
 * spends only that organisation's slots when it is slow. Queues are made on first use and dropped once idle.
 */
export class Endpoints<T extends { settle: Settle }> {
  /** organisation id → endpoint origin → its queue. */
  private readonly byOrg = new Map<string, Map<string, EndpointQueue<T>>>()
  /** webhook id → its URL and endpoint's queue, for handing back a stalled endpoint's jobs without reading them. */
  private readonly queueOf = new Map<string, { href: string, queue: EndpointQueue<T> }>()
  private readonly urls = new Map<string, { url: URL, origin: string } | null>()
  private backlogCheckedAt = 0
  private acceptedSinceCheck = 0
  private full = false

  /** `run` and `failed`: see EndpointQueue. */
  constructor (
    private readonly concurrency: number,
    private readonly run: (item: T) => Promise<void>,
    private readonly failed: (err: unknown, item: T) => void
  ) {}

  /** Where the webhook's attempts go; undefined when its URL does not parse. */
  target (webhook: { id: string, org_id: string, url: string }): EndpointTarget<T> | undefined {
    const parsed = this.urlOf(webhook.url)
    if (parsed === undefined) return undefined
    const queue = this.queue(webhook.org_id, parsed.origin)
    this.queueOf.set(webhook.id, { href: webhook.url, queue })
    return { url: parsed.url, queue }
  }

  /**
   * The queue of the webhook's endpoint when it is known to be stalled: every slot busy, and not keeping pace. Not
   * once the webhook's URL (`currentUrl`) is another than the one that queue was found for.
   */
  stalled (webhookId: string, currentUrl: string | undefined, now: number): EndpointQueue<T> | undefined {
    const known = this.queueOf.get(webhookId)
    if (known === undefined || known.href !== currentUrl) return undefined
    const q = known.queue
    return q.freeSlots === 0 && !q.keepsPace(now) ? q : undefined
  }

  /**
   * The webhook's URL parsed once (not per event), and the same object every time, so that the HTTP client
   * can keep what it derives from it; undefined when it does not parse.
   */
  private urlOf (href: string): { url: URL, origin: string } | undefined {
    let parsed = this.urls.get(href)
    if (parsed === undefined) {
      if (this.urls.size >= MAX_URLS) this.urls.clear()
      try {
        const url = new URL(href)
        parsed = { url, origin: url.origin }
      } catch {
        parsed = null
      }
      this.urls.set(href, parsed)
    }
    return parsed ?? undefined
  }

  private queue (orgId: string, origin: string): EndpointQueue<T> {
    let ofOrg = this.byOrg.get(orgId)
    if (ofOrg === undefined) {
      ofOrg = new Map()
      this.byOrg.set(orgId, ofOrg)
    }
    let q = ofOrg.get(origin)
    if (q === undefined) {
      q = new EndpointQueue<T>(this.concurrency, MAX_WAITING_PER_ENDPOINT, this.run, this.failed)
      ofOrg.set(origin, q)
    }
    return q
  }

  /** Every endpoint queue, of every organisation. */
  private * queues (): IterableIterator<EndpointQueue<T>> {
    for (const ofOrg of this.byOrg.values()) yield * ofOrg.values()
  }

  /**
   * Backpressure for the fan-out and the shard consumers: true while the endpoints that keep pace already
   * hold about a second of their work. Dead or slow receivers do not count, so they cannot stop the pull for
   * healthy ones; their overflow waits in the job stream instead.
   */
  saturated (): boolean {
    const now = Date.now()
    if (++this.acceptedSinceCheck < BACKLOG_CHECK_JOBS && now - this.backlogCheckedAt < BACKLOG_CHECK_MS) return this.full
    this.backlogCheckedAt = now
    this.acceptedSinceCheck = 0
    // Endpoints that have answered pace the fan-out. One that never answered yet (new, or dead from the start)
    // does not, unless no endpoint has answered yet: else a receiver that hangs from its first request would
    // hold every other endpoint back until it is found stalled.
    const answered = { backlog: 0, capacity: 0 }
    const unanswered = { backlog: 0, capacity: 0 }
    for (const q of this.queues()) {
      // Work that waits here for an endpoint that stopped keeping pace goes back to the job stream.
      if (q.waiting.length > 0 && !q.keepsPace(now)) for (const w of q.takeWaiting()) w.settle.nak(handBackMs(q, now))
      const p = q.pacing(now)
      const sum = q.answered ? answered : unanswered
      sum.backlog += p.waiting
      sum.capacity += p.capacity
    }
    const { backlog, capacity } = answered.capacity > 0 ? answered : unanswered
    // Full when the endpoints that keep pace hold about a second of their work (or the absolute limit).
    this.full = capacity > 0 && backlog >= Math.min(MAX_MOVING_BACKLOG, capacity)
    return this.full
  }

  /** Re-sends a working() for every waiting item so none is redelivered while it waits; drops idle queues. */
  keepAlive (): void {
    for (const q of this.queues()) for (const w of q.waiting) w.settle.working()
    for (const [orgId, ofOrg] of this.byOrg) {
      for (const [origin, q] of ofOrg) if (q.idle) ofOrg.delete(origin)
      if (ofOrg.size === 0) this.byOrg.delete(orgId)
    }
    // the same test as above, in the same turn: exactly the queues just removed
    for (const [id, known] of this.queueOf) if (known.queue.idle) this.queueOf.delete(id)
  }

  /** Takes every waiting item out of every queue (shutdown hands them back to the stream). */
  takeAllWaiting (): T[] {
    return [...this.queues()].flatMap((q) => q.takeWaiting())
  }

  /** Whether any attempt is in flight. */
  get busy (): boolean {
    return [...this.queues()].some((q) => q.active > 0)
  }
}
