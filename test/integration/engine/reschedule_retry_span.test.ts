import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { HttpResult } from '../../helpers/outbox.ts'
import { readMessage } from '../../helpers/read_after_write.ts'
import { sleepUntil } from '../../helpers/waiting.ts'
import { type EventWatcher, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { MAX_SCHEDULE_AHEAD_MS } from '../../../protocol/mod.ts'

/**
 * A rescheduled message's retry span counts from its new time, not from the `scheduled_at` it was sent with: a
 * reschedule later by more than the span used to leave one attempt, then a soft bounce. And a reschedule cannot take
 * a message further than 72 h after its acceptance, which is what its stored content and schedule state last for.
 */
let scenario: RelayScenario
let events: EventWatcher
let key: string
// a span of 6 s, so "later by more than the span" takes seconds, as 69 h or more does by default
const SCHEDULE = '3,3'

before(async () => {
  scenario = await startRelayScenario({ env: { OB_ROLE: 'all', OB_DELIVERY_RETRY_SCHEDULE: SCHEDULE } })
  events = scenario.events
  key = await scenario.ob.key(scenario.org, ['send', 'read'])
})
after(async () => { await scenario.close() })

async function sendAt (to: string, at: Date): Promise<{ id: string, createdAt: number }> {
  const body = { from: `App <hello@${scenario.org.domain}>`, to, subject: 'Later', text: 'Later', scheduled_at: at.toISOString() }
  const r = await scenario.ob.request('POST', '/v1/messages/send', { key, body })
  assert.equal(r.status, 202, r.text)
  assert.equal((await readMessage(scenario.ob, r.body.id, key)).status, 200)
  return { id: r.body.id, createdAt: Date.parse(r.body.created_at) }
}

const reschedule = async (id: string, at: Date): Promise<HttpResult> =>
  await scenario.ob.request('PATCH', `/v1/messages/${id}`, { key, body: { scheduled_at: at.toISOString() } })

test('a message rescheduled later than its first time plus the retry span still gets its retries', async () => {
  const rcpt = 'tempfail-span@dest.example' // 451 once, then accepted
  const { id } = await sendAt(rcpt, new Date(Date.now() + 3000))
  const r = await reschedule(id, new Date(Date.now() + 12_000)) // past the first time plus the 6 s span
  assert.equal(r.status, 200, r.text)
  await events.until(() => events.of(id, 'delivered').length === 1 || events.of(id, 'bounced').length === 1, 40_000)
  assert.deepEqual(events.of(id).map((e) => e.type), ['deferred', 'delivered'])
  assert.equal(scenario.sink.to(rcpt).length, 1)
})

test('a reschedule to more than 72 h after the message was accepted is 400 naming scheduled_at; up to then it is 200', async () => {
  const { id, createdAt } = await sendAt('far@dest.example', new Date(Date.now() + 3600_000))
  await sleepUntil(createdAt + 1500) // so that 72 h from now lies past 72 h from the acceptance (by more than the 1 s tried below)
  const latest = createdAt + MAX_SCHEDULE_AHEAD_MS
  const late = await reschedule(id, new Date(latest + 1000))
  assert.equal(late.status, 400, late.text)
  assert.equal(late.body.error.code, 'validation_error')
  assert.equal(late.body.error.field, 'scheduled_at')
  assert.match(late.body.error.message, /72 hours after the message was accepted/)
  const ok = await reschedule(id, new Date(latest))
  assert.equal(ok.status, 200, ok.text)
  assert.equal(ok.body.scheduled_at, new Date(latest).toISOString())
  assert.equal((await scenario.ob.request('POST', `/v1/messages/${id}/cancel`, { key })).status, 200)
})
