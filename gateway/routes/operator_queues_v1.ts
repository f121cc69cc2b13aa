import type { Redis } from 'ioredis'
import { Type } from 'typebox'
import {
  ApiError, QUEUE_SELECTOR_KINDS, normalizeSelector, type QueueActor, type QueueOrderRecord, type QueueSelector, type QueueSelectorKind
} from '../../protocol/mod.ts'
import { QueueIndex, wakeWaiting, type WakeResult } from '../../stores/queues/mod.ts'
import { operatorRoute, type OperatorRequestContext } from '../http/route.ts'
import { operatorErrorResponses } from '../schemas/control.ts'
import { HoldView, OrderResult, QueueBounceBody, QueueListQuery, QueuePage, QueueSelectorBody } from '../schemas/queues.ts'
import type { GatewayDeps } from '../deps.ts'

/**
 * The operator's queue API: waiting mail by recipient domain, provider and organisation (read from the index the
 * engine keeps in Redis, stores/queues/), holds and releases (control-plane records every engine mirrors), and orders
 * that retry or bounce waiting mail now (an order record, then the waiting messages woken). Every action is one line
 * of the security log naming the operator key. Holds and orders are written through `cp.queues`, as the CLI does.
 */

const TAG = 'Operator'
const DEFAULT_LIMIT = 20

/** One reader of the index per Redis client (it defines its script on the client once). */
const indexes = new WeakMap<object, QueueIndex>()
function indexOf (redis: Redis): QueueIndex {
  let i = indexes.get(redis)
  if (i === undefined) indexes.set(redis, i = new QueueIndex(redis))
  return i
}

const BAD_SELECTOR = 'by not domain, provider or organization; value not of that kind'

function selectorOf (body: { by?: unknown, value?: unknown }): QueueSelector {
  const { selector, errors } = normalizeSelector(body)
  if (selector === undefined) throw ApiError.validation(errors)
  return selector
}

function actorOf (ctx: Pick<OperatorRequestContext, 'operator'>): QueueActor {
  return { key_id: ctx.operator.key.id, name: ctx.operator.key.name }
}

async function fromRedis<T> (work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (err) {
    throw new ApiError('service_unavailable', 'The queue index in Redis cannot be read now; delivery goes on meanwhile.', { cause: err })
  }
}

function orderView (o: QueueOrderRecord): Omit<QueueOrderRecord, 'kind'> {
  const { kind: _kind, ...view } = o
  return view
}

/** Wakes the waiting messages an order selects; a failure leaves the order in force for their next attempt. */
async function wake (deps: GatewayDeps, order: QueueOrderRecord): Promise<WakeResult> {
  try {
    return await wakeWaiting(deps.nc, indexOf(deps.redis), order.selector, order.action, order.id)
  } catch (err) {
    throw new ApiError('service_unavailable',
      `Order ${order.id} is recorded and applies at each selected message's next attempt, but waking them failed; repeat the call.`,
      { cause: err, retryAfter: 1 })
  }
}

export const operatorQueueRoutes = [
  operatorRoute({
    method: 'get',
    path: '/v1/operator/queues',
    permission: 'operator',
    summary: 'Waiting mail by recipient domain, provider or organisation, deepest queue first',
    description: 'Mail the engine handed back for a later attempt: deferred, throttled, waiting for its egress lane, or held. ' +
      'Mail on its first attempt is not listed. `by` defaults to `domain`. Read from Redis; unreachable, it is 503.',
    tag: TAG,
    query: QueueListQuery,
    responses: {
      200: { description: 'A page of queues', schema: QueuePage },
      ...operatorErrorResponses({ validation_error: 'Bad by, limit or cursor', service_unavailable: 'Redis cannot be read now' })
    },
    handler: async ({ deps, query }) => {
      const by = (query.get('by') ?? 'domain') as QueueSelectorKind
      if (!(QUEUE_SELECTOR_KINDS as readonly string[]).includes(by)) {
        throw ApiError.validation([{ field: 'by', message: 'must be domain, provider or organization' }])
      }
      const limit = query.has('limit') ? Number(query.get('limit')) : DEFAULT_LIMIT
      const cursor = query.get('cursor')
      const offset = cursor === null || cursor === '' ? 0 : Number(Buffer.from(cursor, 'base64url').toString('utf8'))
      if (!Number.isSafeInteger(offset) || offset < 0) {
        throw ApiError.validation([{ field: 'cursor', message: 'is not a cursor this API returned' }])
      }
      const page = await fromRedis(indexOf(deps.redis).list(by, offset, limit))
      const data = page.data.map((q) => ({ ...q, held: deps.cp.queues.hold({ by, value: q.value }) !== undefined }))
      const end = offset + data.length
      const more = end < page.total && data.length === limit
      return {
        status: 200,
        body: { data, total: page.total, has_more: more, next_cursor: more ? Buffer.from(String(end)).toString('base64url') : null }
      }
    }
  }),
  operatorRoute({
    method: 'get',
    path: '/v1/operator/queues/holds',
    permission: 'operator',
    summary: 'The holds in force, oldest first',
    tag: TAG,
    responses: { 200: { description: 'Every hold', schema: Type.Object({ data: Type.Array(HoldView) }) }, ...operatorErrorResponses({}) },
    handler: ({ deps }) => ({ status: 200, body: { data: deps.cp.queues.holds().map(({ kind: _k, ...h }) => h) } })
  }),
  operatorRoute<{ by: string, value: string, reason?: string }>({
    method: 'post',
    path: '/v1/operator/queues/hold',
    permission: 'operator',
    summary: 'Hold waiting mail: it waits without spending its retries until released',
    description: 'Every engine checks the holds at each attempt: a held recipient is looked at again every 5 s, with no attempt ' +
      'counted and no event. A provider is recognised from the MX hosts at the first attempt. Holding what is held answers 200 ' +
      'with the hold in force; a new hold is 201.',
    tag: TAG,
    body: QueueSelectorBody,
    responses: {
      201: { description: 'Held', schema: HoldView },
      200: { description: 'Held already: the hold in force', schema: HoldView },
      ...operatorErrorResponses({ validation_error: BAD_SELECTOR })
    },
    handler: async (ctx) => {
      const selector = selectorOf(ctx.body)
      const { hold, created } = await ctx.deps.cp.queues.putHold(selector, actorOf(ctx), ctx.body.reason)
      ctx.deps.security.queueChanged('hold', ctx, { ...selector, ...(ctx.body.reason !== undefined ? { reason: ctx.body.reason } : {}) })
      const { kind: _kind, ...view } = hold
      return { status: created ? 201 : 200, body: view }
    }
  }),
  operatorRoute<{ by: string, value: string, reason?: string }>({
    method: 'post',
    path: '/v1/operator/queues/release',
    permission: 'operator',
    summary: 'Release held mail: each held recipient is attempted at its next look, within 5 s',
    tag: TAG,
    body: QueueSelectorBody,
    responses: {
      200: { description: 'Released: the hold that was in force', schema: HoldView },
      ...operatorErrorResponses({ validation_error: BAD_SELECTOR, not_found: 'No hold on this selector' })
    },
    handler: async (ctx) => {
      const selector = selectorOf(ctx.body)
      const hold = await ctx.deps.cp.queues.releaseHold(selector)
      ctx.deps.security.queueChanged('release', ctx, { ...selector, ...(ctx.body.reason !== undefined ? { reason: ctx.body.reason } : {}) })
      const { kind: _kind, ...view } = hold
      return { status: 200, body: view }
    }
  }),
  operatorRoute<{ by: string, value: string, reason?: string }>({
    method: 'post',
    path: '/v1/operator/queues/retry',
    permission: 'operator',
    summary: 'Retry waiting mail now instead of at its next scheduled attempt',
    description: 'Each selected message waiting for a later attempt is woken and its selected recipients attempted now; the ' +
      'attempt counts as any other. Held mail stays held. Messages due within 2 s are left to that attempt.',
    tag: TAG,
    body: QueueSelectorBody,
    responses: {
      200: { description: 'The order and what it woke', schema: OrderResult },
      ...operatorErrorResponses({ validation_error: BAD_SELECTOR, service_unavailable: 'Redis or JetStream unavailable; repeat the call' })
    },
    handler: async (ctx) => await order(ctx, 'retry', false)
  }),
  operatorRoute<{ by: string, value: string, only_held?: boolean, reason?: string }>({
    method: 'post',
    path: '/v1/operator/queues/bounce',
    permission: 'operator',
    summary: 'Bounce waiting mail: each selected recipient gets its `bounced` event, category `operator`',
    description: 'Applies to mail accepted before the call that waits for a later attempt (with `only_held`, mail a hold keeps ' +
      'waiting, which meets the order within 5 s). Each recipient ends with a hard `bounced` event of the category `operator` ' +
      '(no suppression); a recipient already delivered or bounced is not touched.',
    tag: TAG,
    body: QueueBounceBody,
    responses: {
      200: { description: 'The order and what it woke', schema: OrderResult },
      ...operatorErrorResponses({ validation_error: BAD_SELECTOR, service_unavailable: 'Redis or JetStream unavailable; repeat the call' })
    },
    handler: async (ctx) => await order(ctx, 'bounce', ctx.body.only_held === true)
  })
]

async function order (ctx: OperatorRequestContext<{ by: string, value: string, reason?: string }>, action: 'retry' | 'bounce',
  onlyHeld: boolean): Promise<{ status: number, body: unknown }> {
  const selector = selectorOf(ctx.body)
  const reason = ctx.body.reason
  const recorded = await ctx.deps.cp.queues.putOrder(action, selector, onlyHeld, actorOf(ctx), reason)
  // held mail looks at the orders every 5 s by itself: only mail waiting for its retry schedule needs waking
  const woken = onlyHeld ? { woken: 0, skipped: 0, more: false } : await wake(ctx.deps, recorded)
  ctx.deps.security.queueChanged(action, ctx, {
    ...selector, order_id: recorded.id, only_held: onlyHeld, woken: woken.woken, ...(reason !== undefined ? { reason } : {})
  })
  return { status: 200, body: { order: orderView(recorded), ...woken } }
}
