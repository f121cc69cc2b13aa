import { test } from 'node:test'
import assert from 'node:assert/strict'
import { pino } from 'pino'
import { QueueGate, wakeOf } from '../../../engine/queue_holds.ts'
import { planRecipients } from '../../../engine/processing/delivery_plan.ts'
import { freshRecipientState, type RecipientState } from '../../../engine/delivery_state_layout.ts'
import {
  HOLD_RECHECK_MS, selectorMatches, wakeHeaderValue, type QueueHoldRecord, type QueueOrderRecord, type QueueSelector, type QueuedMessage,
  type QueuedRecipient
} from '../../../protocol/mod.ts'
import type { QueueControls } from '../../../stores/control_plane/mod.ts'
import type { QueueIndex } from '../../../stores/queues/mod.ts'

const NOW = Date.parse('2026-11-28T12:00:00.000Z')
const MSG = { id: 'msg_1', org_id: 'org_a', created_at: '2026-11-28T11:00:00.000Z' } as unknown as QueuedMessage
const actor = { key_id: 'opk_1', name: 'ops' }

/** The control plane's answers, from a list of holds and bounce orders (the real class reads them from KV). */
function controls (holds: QueueSelector[], bounces: Array<Partial<QueueOrderRecord> & { selector: QueueSelector }> = []): QueueControls {
  const hold = (s: QueueSelector): QueueHoldRecord => ({ kind: 'queue_hold', selector: s, held_at: '', held_by: actor })
  return {
    heldBy: (r: QueuedRecipient) => { const s = holds.find((h) => selectorMatches(h, r)); return s === undefined ? undefined : hold(s) },
    bounceOrder: (r: QueuedRecipient, accepted: number, held: boolean) => {
      const o = bounces.find((b) => selectorMatches(b.selector, r) && (b.only_held !== true || held))
      return o === undefined || accepted > NOW ? undefined : { id: 'qo_1', issued_by: actor, ...o } as QueueOrderRecord
    }
  } as unknown as QueueControls
}

const gate = (c: QueueControls): QueueGate => new QueueGate(c, {} as QueueIndex, pino({ level: 'silent' }))
const state = (s: Partial<RecipientState>): RecipientState => ({ ...freshRecipientState(), ...s })
const RCPTS = ['a@held.example', 'b@open.example', 'c@gmail.example']

test('a held domain or organisation waits HOLD_RECHECK_MS without an attempt; the rest stays due', () => {
  const plan = planRecipients(RCPTS, new Map(), NOW)
  const byDomain = gate(controls([{ by: 'domain', value: 'held.example' }])).check(MSG, plan, NOW)
  assert.deepEqual(byDomain.plan.due, ['b@open.example', 'c@gmail.example'])
  assert.deepEqual(byDomain.results.map((r) => [r.rcpt, r.outcome]),
    [['a@held.example', { kind: 'throttled', retryAfterMs: HOLD_RECHECK_MS }]])
  const byOrg = gate(controls([{ by: 'organization', value: 'org_a' }])).check(MSG, plan, NOW)
  assert.deepEqual(byOrg.plan.due, [])
  assert.equal(byOrg.results.length, 3)
  const none = gate(controls([])).check(MSG, plan, NOW)
  assert.equal(none.plan, plan, 'no hold: the plan as it was')
})

test('a provider hold applies once an attempt recorded the provider', () => {
  const states = new Map([['c@gmail.example', state({ provider: 'google' })]])
  const plan = planRecipients(RCPTS, states, NOW)
  const out = gate(controls([{ by: 'provider', value: 'google' }])).check(MSG, plan, NOW)
  assert.deepEqual(out.results.map((r) => r.rcpt), ['c@gmail.example'])
})

test('a bounce order ends the recipients it selects with an operator bounce; only_held spares the unheld', () => {
  const plan = planRecipients(RCPTS, new Map(), NOW)
  const c = controls([{ by: 'domain', value: 'held.example' }], [
    { selector: { by: 'organization', value: 'org_a' }, only_held: true, reason: 'retired' }
  ])
  const out = gate(c).check(MSG, plan, NOW)
  assert.deepEqual(out.plan.due, ['b@open.example', 'c@gmail.example'])
  assert.equal(out.results.length, 1)
  const bounced = out.results[0]!
  assert.equal(bounced.rcpt, 'a@held.example')
  assert.ok(bounced.outcome.kind === 'bounced')
  assert.equal(bounced.outcome.operator, true)
  assert.match(bounced.outcome.message, /qo_1.*retired/)
})

test('a woken retry makes the selected waiting recipients due; finals and other domains keep their state', () => {
  const later = NOW + 600_000
  const states = new Map([
    ['a@held.example', state({ attempts: 1, notBefore: later })],
    ['b@open.example', state({ attempts: 1, notBefore: later })],
    ['c@gmail.example', state({ final: [], published: true })]
  ])
  const plan = planRecipients(RCPTS, states, NOW)
  assert.deepEqual(plan.due, [])
  const wake = wakeOf(wakeHeaderValue('retry', { by: 'domain', value: 'open.example' }))
  const woken = gate(controls([])).woken(MSG, plan, RCPTS, wake, NOW)
  assert.deepEqual(woken.due, ['b@open.example'])
  assert.equal(woken.state('b@open.example').attempts, 1, 'the attempts so far stay')
  assert.equal(gate(controls([])).woken(MSG, plan, RCPTS, undefined, NOW), plan)
  // a bounce wake makes due only what an order it knows ends
  const bounceWake = wakeOf(wakeHeaderValue('bounce', { by: 'domain', value: 'open.example' }))
  assert.deepEqual(gate(controls([])).woken(MSG, plan, RCPTS, bounceWake, NOW).due, [])
  const known = controls([], [{ selector: { by: 'domain', value: 'open.example' } }])
  assert.deepEqual(gate(known).woken(MSG, plan, RCPTS, bounceWake, NOW).due, ['b@open.example'])
})

test('a bounce wake that made nothing due looks again in a second for its first deliveries; a retry wake does not', () => {
  const bounce = wakeOf(wakeHeaderValue('bounce', { by: 'domain', value: 'open.example' }))
  const retry = wakeOf(wakeHeaderValue('retry', { by: 'domain', value: 'open.example' }))
  const g = gate(controls([]))
  const until = NOW + 600_000
  assert.equal(g.nextLook(bounce, false, 2, until, NOW), NOW + 1000)
  assert.equal(g.nextLook(bounce, false, 11, until, NOW), until, 'not for ever')
  assert.equal(g.nextLook(bounce, true, 2, until, NOW), until)
  assert.equal(g.nextLook(retry, false, 2, until, NOW), until)
  assert.equal(g.nextLook(undefined, false, 2, until, NOW), until)
})
