import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  attemptRoute, failedResults, messageStep, planRecipients, recipientAction, recipientsOf, scheduleStepOf, unadmittedResult,
  unsendableResults
} from '../../../../engine/processing/delivery_plan.ts'
import { MAX_NAK_MS } from '../../../../engine/processing/fate.ts'
import { freshRecipientState, type RecipientState } from '../../../../engine/delivery_state_layout.ts'
import { DUE_EARLY_MS } from '../../../../engine/retry_schedule.ts'
import type { RecipientResult } from '../../../../engine/actor/task.ts'
import type { DomainRecord, EventRecord } from '../../../../protocol/mod.ts'

const NOW = Date.parse('2026-11-25T02:00:00.000Z')
const AT = '2026-11-25T02:00:00.000Z'
const EVENTS = [{ id: 'evt_1' }] as unknown as EventRecord[]
const REPLY: RecipientResult = { rcpt: 'sent@x.org', at: AT, outcome: { kind: 'delivered', response: '250 OK' } }
const DOMAIN = { id: 'dom_1' } as unknown as DomainRecord

const state = (s: Partial<RecipientState>): RecipientState => ({ ...freshRecipientState(), ...s })

test('recipients are the distinct bare addresses of To, Cc and Bcc, in that order', () => {
  const msg = { to: ['A <a@x.org>', 'b@x.org'], cc: ['a@x.org'], bcc: ['C <c@x.org>'] }
  assert.deepEqual(recipientsOf(msg), ['a@x.org', 'b@x.org', 'c@x.org'])
})

test('the schedule verdict: taken goes on from its due time, a duplicate copy drops, a wait hands back, a cancel ends', () => {
  assert.deepEqual(scheduleStepOf({ kind: 'taken', dueAt: NOW - 5 }, NOW), { go: true, dueAt: NOW - 5 })
  assert.deepEqual(scheduleStepOf({ kind: 'duplicate' }, NOW), { go: false, fate: { kind: 'drop' } })
  const waitFor = (delayMs: number): unknown => ({ go: false, fate: { kind: 'nak', delayMs }, waiting: true })
  assert.deepEqual(scheduleStepOf({ kind: 'wait', at: NOW + 1500.2 }, NOW), waitFor(1501))
  assert.deepEqual(scheduleStepOf({ kind: 'wait', at: NOW + 7 * 24 * 3600_000 }, NOW), waitFor(MAX_NAK_MS),
    'a long wait in steps of an hour')
  assert.deepEqual(scheduleStepOf({ kind: 'canceled' }, NOW), { go: false, fate: { kind: 'ack' }, canceled: true })
})

test('a recipient: a published final is done, an unpublished one is published again, a recorded reply is recovered', () => {
  assert.deepEqual(recipientAction(state({ final: EVENTS, published: true }), NOW), { kind: 'done' })
  assert.deepEqual(recipientAction(state({ final: EVENTS }), NOW), { kind: 'republish', events: EVENTS })
  // a final wins over the reply it was made from
  assert.deepEqual(recipientAction(state({ final: EVENTS, sent: REPLY }), NOW), { kind: 'republish', events: EVENTS })
  assert.deepEqual(recipientAction(state({ sent: REPLY, notBefore: NOW + 60_000 }), NOW), { kind: 'recover', result: REPLY })
})

test('a recipient without a reply is attempted from DUE_EARLY_MS before its time, and waits before that', () => {
  assert.deepEqual(recipientAction(freshRecipientState(), NOW), { kind: 'attempt' })
  assert.deepEqual(recipientAction(state({ notBefore: NOW + DUE_EARLY_MS }), NOW), { kind: 'attempt' })
  assert.deepEqual(recipientAction(state({ notBefore: NOW + DUE_EARLY_MS + 1 }), NOW), { kind: 'wait', until: NOW + DUE_EARLY_MS + 1 })
})

test('the plan groups the recipients in their order; a recipient nothing was recorded for is fresh and due', () => {
  const states = new Map<string, RecipientState>([
    ['done@x.org', state({ final: EVENTS, published: true })],
    ['again@x.org', state({ final: EVENTS })],
    ['sent@x.org', state({ sent: REPLY })],
    ['later@x.org', state({ attempts: 1, notBefore: NOW + 60_000 })]
  ])
  const plan = planRecipients(['new@x.org', 'done@x.org', 'again@x.org', 'sent@x.org', 'later@x.org'], states, NOW)
  assert.deepEqual(plan.republish, ['again@x.org'])
  assert.deepEqual(plan.pending, ['new@x.org', 'sent@x.org', 'later@x.org'])
  assert.deepEqual(plan.recovered, [REPLY])
  assert.deepEqual(plan.unanswered, ['new@x.org', 'later@x.org'])
  assert.deepEqual(plan.due, ['new@x.org'])
  assert.deepEqual(plan.state('new@x.org'), freshRecipientState())
  assert.equal(plan.state('later@x.org').attempts, 1)
  assert.deepEqual(messageStep(plan), { kind: 'work' })
})

test('the message is done once nobody is pending, waits for the earliest when nobody is due, works for a recorded reply', () => {
  assert.deepEqual(messageStep(planRecipients(['a@x.org'], new Map([['a@x.org', state({ final: EVENTS })]]), NOW)), { kind: 'done' })
  const waiting = new Map([['a@x.org', state({ notBefore: NOW + 90_000 })], ['b@x.org', state({ notBefore: NOW + 30_000 })]])
  assert.deepEqual(messageStep(planRecipients(['a@x.org', 'b@x.org'], waiting, NOW)), { kind: 'wait', until: NOW + 30_000 })
  const recovered = new Map([['a@x.org', state({ notBefore: NOW + 90_000 })], ['sent@x.org', state({ sent: REPLY })]])
  assert.deepEqual(messageStep(planRecipients(['a@x.org', 'sent@x.org'], recovered, NOW)), { kind: 'work' })
})

test('the route: a removed domain fails everyone unanswered; nobody due records only; test messages go to the sandbox', () => {
  const due = planRecipients(['a@x.org'], new Map(), NOW)
  const recorded = new Map([['a@x.org', state({ notBefore: NOW + 90_000 })], ['sent@x.org', state({ sent: REPLY })]])
  const none = planRecipients(['a@x.org', 'sent@x.org'], recorded, NOW)
  assert.deepEqual(attemptRoute({ domain_id: 'dom_9', environment: 'live' }, undefined, none),
    { kind: 'fail', failure: { category: 'domain_removed', reason: 'the sending domain dom_9 no longer exists' } })
  assert.deepEqual(attemptRoute({ domain_id: 'dom_1', environment: 'live' }, DOMAIN, none), { kind: 'none' })
  assert.deepEqual(attemptRoute({ domain_id: 'dom_1', environment: 'test' }, DOMAIN, due), { kind: 'sandbox' })
  assert.deepEqual(attemptRoute({ domain_id: 'dom_1', environment: 'live' }, DOMAIN, due), { kind: 'smtp', domain: DOMAIN })
})

test('an unsendable message keeps each recorded reply and fails every other pending recipient, in recipient order', () => {
  const plan = planRecipients(['a@x.org', 'sent@x.org', 'b@x.org'], new Map([['sent@x.org', state({ sent: REPLY })]]), NOW)
  const failure = { category: 'content_unavailable' as const, reason: 'gone' }
  const failed = (rcpt: string): RecipientResult => ({ rcpt, at: AT, outcome: { kind: 'failed', ...failure } })
  assert.deepEqual(unsendableResults(plan, failure, AT), [failed('a@x.org'), REPLY, failed('b@x.org')])
  assert.deepEqual(failedResults(['a@x.org'], failure, AT), [failed('a@x.org')])
})

test('a recipient its destination does not admit waits while busy or suspended, and is deferred once overdue', () => {
  assert.deepEqual(unadmittedResult('a@x.org', { kind: 'busy', retryAfterMs: 1200 }, true, AT),
    { rcpt: 'a@x.org', at: AT, outcome: { kind: 'throttled', retryAfterMs: 1200 } })
  const suspended = { kind: 'suspended' as const, probeAt: NOW + 30_000, lastResponse: '451 4.7.1 greylisted' }
  assert.deepEqual(unadmittedResult('a@x.org', suspended, false, AT),
    { rcpt: 'a@x.org', at: AT, outcome: { kind: 'throttled', retryAfterMs: 30_000 } })
  assert.deepEqual(unadmittedResult('a@x.org', { ...suspended, probeAt: NOW - 5 }, false, AT).outcome,
    { kind: 'throttled', retryAfterMs: 0 }, 'a probe already due')
  assert.deepEqual(unadmittedResult('a@x.org', suspended, true, AT).outcome,
    { kind: 'deferred', response: '451 4.7.1 greylisted (not attempted: x.org answered only 4xx lately)' })
})
