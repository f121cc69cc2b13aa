import { createHash } from 'node:crypto'
import { PROVIDER_KEY_PATTERN } from './egress/records.ts'
import type { FieldError } from './errors.ts'

/**
 * Queues operators steer: mail waiting for a later attempt, selected by its recipient's domain, its recipient's
 * mailbox provider (docs/egress.md) or its organisation. A **hold** keeps the selected mail waiting without spending
 * its retries; an **order** acts on it once: `retry` makes waiting mail due now, `bounce` ends each selected recipient
 * with a `bounced` event of the category `operator`. Holds and orders are stored in the `ob_egress` KV bucket under
 * `queue.` keys (QUEUE_KEYS) and mirrored by every process; the engine reads its mirror at each attempt. Pure: no I/O.
 */

export const QUEUE_SELECTOR_KINDS = ['domain', 'provider', 'organization'] as const
export type QueueSelectorKind = typeof QUEUE_SELECTOR_KINDS[number]

/** Which waiting mail: by recipient domain, provider id (or `site:…`) or organisation id. */
export interface QueueSelector { by: QueueSelectorKind, value: string }

/** Who did it: the operator key of the API call, or the CLI (which has no key: the local user). */
export interface QueueActor { key_id: string | null, name: string }

export interface QueueHoldRecord {
  kind: 'queue_hold'
  selector: QueueSelector
  held_at: string
  held_by: QueueActor
  reason?: string
}

export const QUEUE_ORDER_ACTIONS = ['retry', 'bounce'] as const
export type QueueOrderAction = typeof QUEUE_ORDER_ACTIONS[number]

export interface QueueOrderRecord {
  kind: 'queue_order'
  id: string
  action: QueueOrderAction
  selector: QueueSelector
  /** Only recipients a hold keeps waiting when the engine meets them. */
  only_held: boolean
  /** The order applies to mail accepted up to this time (ISO 8601); later mail is not touched. */
  issued_at: string
  issued_by: QueueActor
  reason?: string
}

export type QueueControlRecord = QueueHoldRecord | QueueOrderRecord

/**
 * An order is kept (and applies) this long: longer than a message can wait, since the delivery state of a message
 * lasts 7 days (engine/delivery_state_layout.ts); older ones are removed by the next order written.
 */
export const QUEUE_ORDER_KEEP_MS = 7 * 24 * 3600_000

/** A held recipient is looked at again this often: release takes effect at its next look, within this time. */
export const HOLD_RECHECK_MS = 5_000

/**
 * The header of a copy of a queued message published to wake it (stores/queues/wake.ts): `retry;<by>=<value>` or
 * `bounce;<by>=<value>`. The engine reads a retry on the copy's first delivery only, a bounce on each.
 */
export const WAKE_HEADER = 'Ob-Queue-Wake'

/** Keys in `ob_egress`: a selector's value may hold characters KV keys may not, so keys carry a digest of it. */
export const QUEUE_KEYS = {
  prefix: 'queue.',
  holdPrefix: 'queue.hold.',
  orderPrefix: 'queue.order.',
  hold: (s: QueueSelector): string => `queue.hold.${selectorDigest(s)}`,
  order: (id: string): string => `queue.order.${id}`
} as const

function selectorDigest (s: QueueSelector): string {
  return createHash('sha256').update(`${s.by}\n${s.value}`).digest('hex').slice(0, 40)
}

const DOMAIN = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*$/
const PROVIDER = new RegExp(PROVIDER_KEY_PATTERN)
const ORG_ID = /^org_[A-Za-z0-9]{1,64}$/

/** The selector as matched: lower-case domain and provider, a trailing dot gone; undefined with the field errors. */
export function normalizeSelector (input: { by?: unknown, value?: unknown }): { selector?: QueueSelector, errors: FieldError[] } {
  const by = input.by
  if (typeof by !== 'string' || !(QUEUE_SELECTOR_KINDS as readonly string[]).includes(by)) {
    return { errors: [{ field: 'by', message: 'must be domain, provider or organization' }] }
  }
  if (typeof input.value !== 'string') return { errors: [{ field: 'value', message: 'must be a string' }] }
  const kind = by as QueueSelectorKind
  const value = kind === 'organization' ? input.value.trim() : input.value.trim().toLowerCase().replace(/\.$/, '')
  const ok = kind === 'domain' ? DOMAIN.test(value) : kind === 'provider' ? PROVIDER.test(value) && value !== 'default' : ORG_ID.test(value)
  if (!ok) {
    const what = kind === 'domain' ? 'a domain name' : kind === 'provider' ? 'a provider id or site' : 'an organisation id'
    return { errors: [{ field: 'value', message: `is not ${what}` }] }
  }
  return { selector: { by: kind, value }, errors: [] }
}

/** What the engine knows of a waiting recipient; `provider` only once an attempt looked its MX hosts up. */
export interface QueuedRecipient { domain: string, org: string, provider?: string }

export function selectorMatches (s: QueueSelector, r: QueuedRecipient): boolean {
  switch (s.by) {
    case 'domain': return r.domain === s.value
    case 'organization': return r.org === s.value
    case 'provider': return r.provider === s.value
  }
}

/** `retry;domain=example.com`: the wake header's value (WAKE_HEADER). */
export function wakeHeaderValue (action: QueueOrderAction, s: QueueSelector): string {
  return `${action};${s.by}=${s.value}`
}

export function parseWakeHeader (v: string | undefined): { action: QueueOrderAction, selector: QueueSelector } | undefined {
  const m = v === undefined ? null : /^(retry|bounce);(domain|provider|organization)=(.+)$/.exec(v)
  if (m === null) return undefined
  return { action: m[1] as QueueOrderAction, selector: { by: m[2] as QueueSelectorKind, value: m[3]! } }
}
