import type { Logger } from 'pino'
import {
  HOLD_RECHECK_MS, addressDomain, parseWakeHeader, selectorMatches, type QueueOrderAction, type QueueSelector, type QueuedMessage,
  type QueuedRecipient
} from '../protocol/mod.ts'
import type { QueueControls } from '../stores/control_plane/mod.ts'
import type { QueueIndex, WaitingRecipient } from '../stores/queues/mod.ts'
import type { RecipientResult } from './actor/task.ts'
import type { DeliveryStateChanges, RecipientState } from './delivery_state_layout.ts'
import { planRecipients, type RecipientPlan } from './processing/delivery_plan.ts'

/** A bounce wake whose order is not mirrored yet looks again every second for its first deliveries (about 10 s). */
const BOUNCE_WAKE_LOOKS = 10
const BOUNCE_WAKE_LOOK_MS = 1000

/** What a woken copy of a message asks (its WAKE_HEADER: a retry on the copy's first delivery, a bounce on each). */
export interface Wake { action: QueueOrderAction, selector: QueueSelector }

export function wakeOf (header: string | undefined): Wake | undefined {
  return parseWakeHeader(header)
}

/**
 * The operator's holds and orders at the attempt point (protocol/queues.ts), and the index of waiting mail they are
 * listed from. Holds and bounce orders are read from the control plane's in-memory copy (`cp.queues`, kept by the KV
 * watch), so the checks cost no round trip:
 * - a due recipient a hold keeps waiting is handed back for HOLD_RECHECK_MS as a throttled one is: no event, no
 *   attempt spent, its retry span unchanged. A provider is known once an attempt looked the domain's MX hosts up;
 *   before that, the shard thread holds it (DeliverTask.heldProviders) before anything is counted against a lane;
 * - a due recipient a bounce order selects ends `bounced` with the category `operator`;
 * - a woken copy (stores/queues/wake.ts) makes the waiting recipients its wake selects due now: all of them for a
 *   retry, those a bounce order ends for a bounce.
 */
export class QueueGate {
  constructor (private readonly queues: QueueControls, private readonly index: QueueIndex, private readonly log: Logger) {}

  private recipient (msg: QueuedMessage, rcpt: string, state: RecipientState, provider?: string): QueuedRecipient {
    const p = provider ?? state.provider
    return { domain: addressDomain(rcpt), org: msg.org_id, ...(p !== undefined ? { provider: p } : {}) }
  }

  /** The plan of a woken copy: the recipients its wake selects are due now. */
  woken (msg: QueuedMessage, plan: RecipientPlan, recipients: readonly string[], wake: Wake | undefined, now: number): RecipientPlan {
    if (wake === undefined) return plan
    const accepted = Date.parse(msg.created_at)
    const states = new Map<string, RecipientState>()
    let changed = false
    for (const rcpt of recipients) {
      const s = plan.state(rcpt)
      states.set(rcpt, s)
      if (s.final !== undefined || s.sent !== undefined || s.notBefore <= now) continue
      const r = this.recipient(msg, rcpt, s)
      if (!selectorMatches(wake.selector, r)) continue
      if (wake.action === 'bounce' && this.queues.bounceOrder(r, accepted, this.queues.heldBy(r) !== undefined) === undefined) continue
      // due now; still a recipient that waited, whose entry in the index of waiting mail the outcome replaces
      states.set(rcpt, { ...s, notBefore: now })
      changed = true
    }
    return changed ? planRecipients(recipients, states, now) : plan
  }

  /**
   * When a woken message that nothing made due comes back: a bounce's order was written a moment ago and may not be in
   * this engine's mirror yet (the copy can arrive first), so it looks again in a second, for its first deliveries;
   * otherwise at `until`, its own next attempt.
   */
  nextLook (wake: Wake | undefined, changed: boolean, deliveryCount: number, until: number, now: number): number {
    if (wake?.action !== 'bounce' || changed || deliveryCount > BOUNCE_WAKE_LOOKS) return until
    return Math.min(until, now + BOUNCE_WAKE_LOOK_MS)
  }

  /**
   * Splits the due recipients: those a bounce order ends and those a hold keeps waiting get their results here; the
   * plan's `due` keeps the others.
   */
  check (msg: QueuedMessage, plan: RecipientPlan, now: number): { plan: RecipientPlan, results: RecipientResult[] } {
    const results: RecipientResult[] = []
    const due: string[] = []
    const accepted = Date.parse(msg.created_at)
    const at = new Date(now).toISOString()
    for (const rcpt of plan.due) {
      const r = this.recipient(msg, rcpt, plan.state(rcpt))
      const hold = this.queues.heldBy(r)
      const order = this.queues.bounceOrder(r, accepted, hold !== undefined)
      if (order !== undefined) {
        const why = order.reason !== undefined ? `: ${order.reason}` : ''
        const message = `5.0.0 Bounced by an operator (order ${order.id})${why}`
        results.push({ rcpt, at, outcome: { kind: 'bounced', code: '550', message, operator: true } })
        this.log.info({ message_id: msg.id, recipient: rcpt, order_id: order.id, operator_key_id: order.issued_by.key_id },
          'waiting mail bounced by an operator')
      } else if (hold !== undefined) {
        results.push({ rcpt, at, outcome: { kind: 'throttled', retryAfterMs: HOLD_RECHECK_MS } })
      } else {
        due.push(rcpt)
      }
    }
    if (results.length === 0) return { plan, results }
    return { plan: { ...plan, due }, results }
  }

  /** Keeps the provider each attempt found in the delivery state, so that later checks know it without an attempt. */
  noteProviders (results: readonly RecipientResult[], plan: RecipientPlan, changes: DeliveryStateChanges): void {
    for (const r of results) {
      if (r.provider !== undefined && plan.state(r.rcpt).provider !== r.provider) changes.provider(r.rcpt, r.provider)
    }
  }

  /**
   * Writes the message's entry in the index of waiting mail once it is handed back (`waits`: recipient → next
   * attempt), or removes it when it ends. A message that never waited is not written: the first attempt that
   * delivers costs nothing here. A failure is logged; the next hand-back writes the entry again.
   */
  async indexed (msg: QueuedMessage, seq: number, plan: RecipientPlan, results: readonly RecipientResult[],
    waits: ReadonlyMap<string, number>, finals: readonly string[]): Promise<void> {
    const done = new Set(finals)
    const left = plan.pending.filter((r) => !done.has(r))
    const waitedBefore = plan.pending.some((r) => plan.state(r).notBefore > 0)
    if (left.length === 0 && !waitedBefore) return
    const byRcpt = new Map(results.map((r) => [r.rcpt, r]))
    const waiting: WaitingRecipient[] = left.map((rcpt) => {
      const r = byRcpt.get(rcpt)
      const provider = r?.provider ?? plan.state(rcpt).provider
      const reply = r?.outcome.kind === 'deferred' ? r.outcome.response : undefined
      return {
        rcpt,
        domain: addressDomain(rcpt),
        nextAt: waits.get(rcpt) ?? plan.state(rcpt).notBefore,
        ...(provider !== undefined ? { provider } : {}),
        ...(reply !== undefined ? { reply } : {})
      }
    })
    try {
      await this.index.update(msg.id, { org: msg.org_id, seq, acceptedAt: Date.parse(msg.created_at), waiting })
    } catch (err) {
      this.log.warn({ err, message_id: msg.id }, 'the index of waiting mail was not updated; the next hand-back writes it')
    }
  }
}
