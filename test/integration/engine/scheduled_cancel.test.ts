// test-group: long-wait — cancels and reschedules wait for scheduled times and for sends that must not happen
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { HttpResult, TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { readMessage } from '../../helpers/read_after_write.ts'
import { eventually, nothingHappensFor, sleepUntil } from '../../helpers/waiting.ts'
import { engineHoldsBack, type EventWatcher, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { jetstreamManager } from '@nats-io/jetstream'
import { scheduleStateKey } from '../../../stores/schedule/mod.ts'
import { STREAM_OUTBOUND } from '../../../protocol/mod.ts'

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher
let key: string

let scenario: RelayScenario
before(async () => {
  ({ sink, ob, org, events } = scenario = await startRelayScenario({ env: { OB_ROLE: 'all' } }))
  key = await ob.key(org, ['send', 'read'])
})
after(async () => { await scenario.close() })

async function sendAt (to: string, at?: Date): Promise<string> {
  const body = {
    from: `App <hello@${org.domain}>`, to, subject: 'Later', text: 'Later', ...(at !== undefined ? { scheduled_at: at.toISOString() } : {})
  }
  const r = await ob.request('POST', '/v1/messages/send', { key, body })
  assert.equal(r.status, 202, r.text)
  // readable within the documented second: only then do cancel and reschedule find it
  assert.equal((await readMessage(ob, r.body.id, key)).status, 200)
  return r.body.id
}

const cancel = async (id: string, k = key): Promise<HttpResult> => await ob.request('POST', `/v1/messages/${id}/cancel`, { key: k })
const reschedule = async (id: string, at: Date | string, k = key): Promise<HttpResult> =>
  await ob.request('PATCH', `/v1/messages/${id}`, { key: k, body: { scheduled_at: typeof at === 'string' ? at : at.toISOString() } })

test('a cancel right before the due time wins: 200, never sent, reads canceled; a second cancel is 200 too', async () => {
  const at = new Date(Date.now() + 2500)
  const id = await sendAt('cancel-late@dest.example', at)
  // a witness due at the same time: once it arrived, the canceled one would have too
  const witness = await sendAt('witness@dest.example', at)
  await sleepUntil(at.getTime() - 150)
  const r = await cancel(id)
  assert.equal(r.status, 200, r.text)
  assert.deepEqual(r.body, { id, status: 'canceled' })
  await events.until(() => events.of(witness, 'delivered').length === 1, 20_000)
  await nothingHappensFor(1000) // the canceled message, due with the witness, would be at the sink by now
  assert.equal(sink.to('cancel-late@dest.example').length, 0)
  assert.deepEqual(events.of(id), [])
  const read = await ob.request('GET', `/v1/messages/${id}`, { key })
  assert.equal(read.body.status, 'canceled')
  assert.equal((await cancel(id)).status, 200, 'cancelling again answers as the first time')
  const moved = await reschedule(id, new Date(Date.now() + 5000))
  assert.equal(moved.status, 409, moved.text)
  assert.equal(moved.body.error.code, 'conflict')
  const listed = await ob.request('GET', '/v1/messages?status=canceled', { key })
  assert.ok(listed.body.data.some((m: { id: string }) => m.id === id))
})

test('cancel racing delivery: each message is either 200 and never sent, or 409 and sent, never both', async () => {
  const count = 40
  const at = new Date(Date.now() + 8000)
  const ids = await Promise.all(Array.from({ length: count }, async (_, i) => await sendAt(`race${i}@dest.example`, at)))
  const witness = await sendAt('race-witness@dest.example', at)
  assert.ok(Date.now() < at.getTime() - 1000, `sending took until ${Date.now() - at.getTime()} ms from the due time`)
  // the cancels go out together over the second around the due time, so some come before it and some after
  const answers = await Promise.all(ids.map(async (id, i) => {
    await sleepUntil(at.getTime() - 700 + i * 25)
    return await cancel(id)
  }))
  for (const a of answers) assert.ok(a.status === 200 || a.status === 409, a.text)
  const sent = ids.filter((_, i) => answers[i]!.status === 409)
  await events.until(() => [witness, ...sent].every((id) => events.of(id, 'delivered').length === 1), 30_000)
  await nothingHappensFor(1000) // a canceled message that was going to go out anyway would have by now
  ids.forEach((_id, i) => {
    const arrived = sink.to(`race${i}@dest.example`).length
    assert.equal(arrived, answers[i]!.status === 409 ? 1 : 0, `message ${i}: answered ${answers[i]!.status}, arrived ${arrived} times`)
  })
  console.log(`cancel race: ${count - sent.length} canceled, ${sent.length} already sending`)
})

test('a reschedule to a later time holds the message until then and reads the new time', async () => {
  const id = await sendAt('later@dest.example', new Date(Date.now() + 1500))
  const at = new Date(Math.ceil((Date.now() + 5000) / 1000) * 1000)
  const r = await reschedule(id, at)
  assert.equal(r.status, 200, r.text)
  assert.deepEqual(r.body, { id, status: 'scheduled', scheduled_at: at.toISOString() })
  const read = await ob.request('GET', `/v1/messages/${id}`, { key })
  assert.equal(read.body.scheduled_at, at.toISOString())
  assert.equal(read.body.status, 'scheduled')
  await events.until(() => events.of(id, 'delivered').length === 1, 20_000)
  const [m] = sink.to('later@dest.example')
  assert.ok(m!.receivedAt >= at.getTime(), `arrived ${at.getTime() - m!.receivedAt} ms before its new time`)
  assert.ok(m!.receivedAt < at.getTime() + 1000, `arrived ${m!.receivedAt - at.getTime()} ms after its new time`)
})

test('a reschedule to an earlier time sends it then, once, though the engine already held it for the first time', async () => {
  const id = await sendAt('earlier@dest.example', new Date(Date.now() + 120_000))
  await eventually(async () => await engineHoldsBack(ob, id), 'the engine to take the message in and hold it back for two minutes')
  const at = new Date(Date.now() + 2000)
  const r = await reschedule(id, at)
  assert.equal(r.status, 200, r.text)
  await events.until(() => events.of(id, 'delivered').length === 1, 20_000)
  const [m] = sink.to('earlier@dest.example')
  assert.ok(m!.receivedAt >= at.getTime(), `arrived ${at.getTime() - m!.receivedAt} ms before its new time`)
  assert.ok(m!.receivedAt < at.getTime() + 1000, `arrived ${m!.receivedAt - at.getTime()} ms after its new time`)
  // the same reschedule retried, then cancel: both refused now that it was sent
  assert.equal((await reschedule(id, at)).status, 409)
  assert.equal((await cancel(id)).status, 409)
  // the schedule state expires long before the read model: the status alone still refuses
  await ob.proc.redis.del(scheduleStateKey(id))
  assert.equal((await cancel(id)).status, 409)
  assert.equal((await ob.request('GET', `/v1/messages/${id}`, { key })).body.status, 'delivered')
  await nothingHappensFor(1000) // a second copy sent would be at the sink by now
  assert.equal(sink.to('earlier@dest.example').length, 1)
})

test('cancel and reschedule of a message that was sent or never scheduled are 409', async () => {
  const id = await sendAt('plain@dest.example')
  await events.until(() => events.of(id, 'delivered').length === 1)
  for (const r of [await cancel(id), await reschedule(id, new Date(Date.now() + 5000))]) {
    assert.equal(r.status, 409, r.text)
    assert.equal(r.body.error.code, 'conflict')
  }
})

test('another organisation\'s message is 403 as for GET; an unknown id 404; send permission and a valid time are required', async () => {
  const id = await sendAt('owned@dest.example', new Date(Date.now() + 60_000))
  const other = await ob.org()
  const otherKey = await ob.key(other, ['send', 'read'])
  assert.equal((await ob.request('GET', `/v1/messages/${id}`, { key: otherKey })).status, 403)
  assert.equal((await cancel(id, otherKey)).status, 403)
  assert.equal((await reschedule(id, new Date(Date.now() + 5000), otherKey)).status, 403)
  assert.equal((await cancel('msg_0000000000000000000000000')).status, 404)
  const readOnly = await ob.key(org, ['read'])
  assert.equal((await cancel(id, readOnly)).status, 403)
  assert.equal((await reschedule(id, new Date(Date.now() + 5000), readOnly)).status, 403)
  for (const bad of ['tomorrow', new Date(Date.now() - 120_000).toISOString(), new Date(Date.now() + 73 * 3600_000).toISOString()]) {
    const r = await reschedule(id, bad)
    assert.equal(r.status, 400, r.text)
    assert.equal(r.body.error.code, 'validation_error')
  }
  assert.equal((await ob.request('GET', `/v1/messages/${id}`, { key })).body.status, 'scheduled')
  assert.equal((await cancel(id)).status, 200)
})

test('a canceled message the engine holds for its time is done for the work-queue sweep; one not canceled stays', async () => {
  // A nats-server killed between an acknowledgement and its removal leaves a message stored; the sweep removes such
  // leftovers once they are done. A canceled message never gets a delivery outcome: its cancel is what ends it.
  const later = new Date(Date.now() + 10 * 60_000)
  const canceled = await sendAt('canceled-held@dest.example', later)
  const kept = await sendAt('kept-held@dest.example', later)
  await eventually(async () => await engineHoldsBack(ob, canceled) && await engineHoldsBack(ob, kept), 'the engine holding both back')
  const seqOf = async (id: string): Promise<number> => Number(await ob.proc.redis.hget(scheduleStateKey(id), 'seq'))
  const [canceledSeq, keptSeq] = [await seqOf(canceled), await seqOf(kept)]
  assert.equal((await cancel(canceled)).status, 200)
  await ob.proc.engine!.sweep(true)
  const jsm = await jetstreamManager(ob.proc.nc)
  const stored = async (seq: number): Promise<boolean> =>
    await jsm.streams.getMessage(STREAM_OUTBOUND, { seq }).then((m) => m !== null, () => false)
  assert.equal(await stored(canceledSeq), false, 'the canceled message is no longer stored')
  assert.equal(await stored(keptSeq), true, 'the message still waiting for its time is')
  const read = await ob.request('GET', `/v1/messages/${canceled}`, { key })
  assert.equal(read.body.status, 'canceled')
  assert.equal((await cancel(kept)).status, 200)
})
