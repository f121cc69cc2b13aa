import { randomBytes } from 'node:crypto'
import {
  ApiError, QUEUE_KEYS, QUEUE_ORDER_KEEP_MS, selectorMatches, type QueueActor, type QueueControlRecord, type QueueHoldRecord,
  type QueueOrderAction, type QueueOrderRecord, type QueueSelector, type QueuedRecipient
} from '../../protocol/mod.ts'
import { KvConflictError, type KvMirror } from './kv_mirror.ts'

const isHold = (v: QueueControlRecord | undefined): v is QueueHoldRecord => v?.kind === 'queue_hold'
const isOrder = (v: QueueControlRecord | undefined): v is QueueOrderRecord => v?.kind === 'queue_order'
const selectorKey = (s: QueueSelector): string => `${s.by}\n${s.value}`

/**
 * The operator's holds and orders on waiting mail (protocol/queues.ts), in the `ob_egress` bucket under `queue.`
 * keys, mirrored in every process. Every write goes through this class, from the operator API and the CLI alike. The
 * engine asks it at each attempt (`heldBy`, `bounceOrder`): both answer from in-memory copies rebuilt when the watch
 * applies a change to a `queue.` key, so a check costs a map look-up and a walk over the few live bounce orders.
 */
export class QueueControls {
  private holdsBySelector = new Map<string, QueueHoldRecord>()
  private providers: string[] = []
  private bounces: QueueOrderRecord[] = []

  constructor (private readonly mirror: KvMirror<QueueControlRecord>, private readonly now: () => number = Date.now) {
    this.rebuild()
    mirror.onChange((key) => { if (key.startsWith(QUEUE_KEYS.prefix)) this.rebuild() })
  }

  private rebuild (): void {
    const holds = new Map<string, QueueHoldRecord>()
    for (const h of this.mirror.list(QUEUE_KEYS.holdPrefix)) if (isHold(h)) holds.set(selectorKey(h.selector), h)
    this.holdsBySelector = holds
    this.providers = [...holds.values()].filter((h) => h.selector.by === 'provider').map((h) => h.selector.value)
    this.bounces = this.mirror.list(QUEUE_KEYS.orderPrefix).filter(isOrder).filter((o) => o.action === 'bounce')
  }

  /** Every hold, oldest first. */
  holds (): QueueHoldRecord[] {
    return [...this.holdsBySelector.values()].sort((a, b) => a.held_at.localeCompare(b.held_at))
  }

  hold (selector: QueueSelector): QueueHoldRecord | undefined {
    return this.holdsBySelector.get(selectorKey(selector))
  }

  /** Providers held now, for the shard threads, which recognise a recipient's provider from its MX hosts. */
  heldProviders (): readonly string[] {
    return this.providers
  }

  /** The hold that keeps this recipient waiting: its domain's, its organisation's, else its provider's (once known). */
  heldBy (r: QueuedRecipient): QueueHoldRecord | undefined {
    if (this.holdsBySelector.size === 0) return undefined
    return this.holdsBySelector.get(selectorKey({ by: 'domain', value: r.domain })) ??
      this.holdsBySelector.get(selectorKey({ by: 'organization', value: r.org })) ??
      (r.provider !== undefined ? this.holdsBySelector.get(selectorKey({ by: 'provider', value: r.provider })) : undefined)
  }

  /**
   * The bounce order that ends this recipient now: one issued after its message was accepted (`acceptedAt`, ms),
   * whose selector matches it, and, for an order of held mail only, while a hold keeps it waiting.
   */
  bounceOrder (r: QueuedRecipient, acceptedAt: number, held: boolean): QueueOrderRecord | undefined {
    if (this.bounces.length === 0) return undefined
    const oldest = this.now() - QUEUE_ORDER_KEEP_MS
    return this.bounces.find((o) => {
      const issued = Date.parse(o.issued_at)
      return issued >= oldest && acceptedAt <= issued && (!o.only_held || held) && selectorMatches(o.selector, r)
    })
  }

  /** Every order still kept, oldest first. */
  orders (): QueueOrderRecord[] {
    return this.mirror.list(QUEUE_KEYS.orderPrefix).filter(isOrder).sort((a, b) => a.issued_at.localeCompare(b.issued_at))
  }

  /** Holds the selection; holding what is held already changes nothing and answers the hold in force. */
  async putHold (selector: QueueSelector, by: QueueActor, reason?: string): Promise<{ hold: QueueHoldRecord, created: boolean }> {
    const key = QUEUE_KEYS.hold(selector)
    const record: QueueHoldRecord = {
      kind: 'queue_hold', selector, held_at: new Date(this.now()).toISOString(), held_by: by, ...(reason !== undefined ? { reason } : {})
    }
    try {
      await this.mirror.create(key, record)
      return { hold: record, created: true }
    } catch (err) {
      if (!(err instanceof KvConflictError)) throw err
      await this.mirror.sync(1000)
      const cur = this.mirror.get(key)
      if (isHold(cur)) return { hold: cur, created: false }
      throw err
    }
  }

  /** Ends a hold: the mail it kept goes at its next look (within HOLD_RECHECK_MS). 404 when nothing is held. */
  async releaseHold (selector: QueueSelector): Promise<QueueHoldRecord> {
    const key = QUEUE_KEYS.hold(selector)
    const cur = this.mirror.get(key)
    if (!isHold(cur)) throw new ApiError('not_found', `No hold on ${selector.by} ${selector.value}.`)
    await this.mirror.delete(key)
    return cur
  }

  /** Records an order; orders older than QUEUE_ORDER_KEEP_MS go now (they apply to nothing any more). */
  async putOrder (action: QueueOrderAction, selector: QueueSelector, onlyHeld: boolean, by: QueueActor,
    reason?: string): Promise<QueueOrderRecord> {
    const now = this.now()
    const order: QueueOrderRecord = {
      kind: 'queue_order',
      id: `qo_${now.toString(36)}${randomBytes(8).toString('hex')}`,
      action,
      selector,
      only_held: onlyHeld,
      issued_at: new Date(now).toISOString(),
      issued_by: by,
      ...(reason !== undefined ? { reason } : {})
    }
    await this.mirror.create(QUEUE_KEYS.order(order.id), order)
    for (const o of this.orders()) {
      if (Date.parse(o.issued_at) < now - QUEUE_ORDER_KEEP_MS) await this.mirror.delete(QUEUE_KEYS.order(o.id)).catch(() => {})
    }
    return order
  }
}
