import { Type } from 'typebox'
import { QUEUE_SELECTOR_KINDS } from '../../protocol/mod.ts'
import { Timestamp } from './control.ts'

/**
 * Request and response records of the operator's queue API (protocol/queues.ts). The value's shape per kind is
 * checked again by `normalizeSelector`, which the CLI calls too.
 */

const By = Type.Enum([...QUEUE_SELECTOR_KINDS], { description: 'Select by recipient domain, mailbox provider or organisation' })
const Value = Type.String({
  minLength: 1, maxLength: 253, description: 'A domain name, a provider id (`google`) or site (`site:…`), or an organisation id'
})
const Reason = Type.String({ maxLength: 200, description: 'Why, for the log and the records (a bounce\'s message carries it)' })

export const QueueSelectorBody = Type.Object({ by: By, value: Value, reason: Type.Optional(Reason) }, { additionalProperties: false })

export const QueueBounceBody = Type.Object({
  by: By,
  value: Value,
  only_held: Type.Optional(Type.Boolean({ description: 'Only recipients a hold keeps waiting (default false)' })),
  reason: Type.Optional(Reason)
}, { additionalProperties: false })

export const QueueListQuery = Type.Object({
  by: Type.Optional(By),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Queues at most' })),
  cursor: Type.Optional(Type.String({ maxLength: 40 }))
})

const Actor = Type.Object({
  key_id: Type.Union([Type.String(), Type.Null()], { description: 'The operator key; null when the CLI did it' }),
  name: Type.String({ description: 'The operator key\'s name, or `cli:<user>`' })
})
const Selector = Type.Object({ by: By, value: Type.String() })

export const QueueView = Type.Object({
  by: By,
  value: Type.String(),
  recipients: Type.Integer({ description: 'Recipients waiting' }),
  messages: Type.Integer({ description: 'Messages with at least one recipient waiting' }),
  oldest_accepted_at: Type.Union([Timestamp, Type.Null()], { description: 'When the oldest waiting message was accepted' }),
  next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'The soonest next attempt (or look, for held mail)' }),
  last_reply: Type.Union([Type.Object({ at: Timestamp, text: Type.String() }), Type.Null()], {
    description: 'The last deferral reply a recipient of this queue got'
  }),
  held: Type.Boolean({ description: 'A hold on this very selector is in force' })
})

export const QueuePage = Type.Object({
  data: Type.Array(QueueView),
  total: Type.Integer({ description: 'Queues of this kind' }),
  has_more: Type.Boolean(),
  next_cursor: Type.Union([Type.String(), Type.Null()])
})

export const HoldView = Type.Object({
  selector: Selector, held_at: Timestamp, held_by: Actor, reason: Type.Optional(Type.String())
})

export const OrderView = Type.Object({
  id: Type.String(),
  action: Type.Enum(['retry', 'bounce']),
  selector: Selector,
  only_held: Type.Boolean(),
  issued_at: Timestamp,
  issued_by: Actor,
  reason: Type.Optional(Type.String())
})

export const OrderResult = Type.Object({
  order: OrderView,
  woken: Type.Integer({ description: 'Waiting messages woken to act now' }),
  skipped: Type.Integer({ description: 'Messages due within 2 s or being attempted: they meet the order at that attempt' }),
  more: Type.Boolean({ description: 'More than 10,000 messages waited: repeat the call for the rest' })
})
