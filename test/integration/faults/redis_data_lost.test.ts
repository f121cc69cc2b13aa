import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { HttpResult, TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { readMessage } from '../../helpers/read_after_write.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { type EventWatcher, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { REDIS_KEYS } from '../../../protocol/mod.ts'

/**
 * What losing Redis data costs (docs/reliability.md "What losing Redis data means"): every scenario sends through
 * the HTTP API to an engine that relays to an SMTP sink, then empties Redis with FLUSHALL, as a flush, a new server
 * without its files, or an evicting Redis would.
 */

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher
let key: string

let scenario: RelayScenario
before(async () => {
  ({ sink, ob, org, events } = scenario = await startRelayScenario({ env: { OB_ROLE: 'all', OB_DELIVERY_RETRY_SCHEDULE: '3,3,3' } }))
  key = await ob.key(org, ['send', 'read'])
})
after(async () => { await scenario.close() })

const flush = async (): Promise<void> => { await ob.proc.redis.flushall() }

async function send (fields: Record<string, unknown>, idempotencyKey?: string): Promise<HttpResult> {
  const body = { from: `App <hello@${org.domain}>`, subject: 'Hello', text: 'Hello', ...fields }
  return await ob.request('POST', '/v1/messages/send', {
    key, body, ...(idempotencyKey !== undefined ? { headers: { 'idempotency-key': idempotencyKey } } : {})
  })
}

async function sendAt (to: string, at: Date): Promise<string> {
  const r = await send({ to, scheduled_at: at.toISOString() })
  assert.equal(r.status, 202, r.text)
  assert.equal((await readMessage(ob, r.body.id, key)).status, 200)
  return r.body.id
}

async function statusOf (id: string): Promise<string | undefined> {
  const r = await ob.request('GET', `/v1/messages/${id}`, { key })
  return r.status === 200 ? r.body.status : undefined
}

test('a canceled scheduled message is never sent after Redis is flushed, and reads canceled again', async () => {
  // far enough ahead for two sends and a cancel on a loaded machine
  const at = new Date(Date.now() + 12_000)
  const id = await sendAt('canceled-then-flushed@dest.example', at)
  // a witness due at the same time: once it arrived, the canceled one would have too
  const witness = await sendAt('flush-witness@dest.example', at)
  const r = await ob.request('POST', `/v1/messages/${id}/cancel`, { key })
  assert.equal(r.status, 200, r.text)
  await flush()
  await events.until(() => events.of(witness, 'delivered').length === 1, 20_000)
  await eventually(async () => await statusOf(id) === 'canceled', 'the canceled message reads canceled again')
  await nothingHappensFor(1000) // a send of the canceled message, due with the witness, would be at the sink by now
  assert.equal(sink.to('canceled-then-flushed@dest.example').length, 0, 'never sent')
  assert.deepEqual(events.of(id), [], 'no event')
  const again = await ob.request('PATCH', `/v1/messages/${id}`, { key, body: { scheduled_at: new Date(Date.now() + 5000).toISOString() } })
  assert.equal(again.status, 409, 'a reschedule of the canceled message is still refused')
  assert.equal((await ob.request('POST', `/v1/messages/${id}/cancel`, { key })).status, 200, 'cancelling again answers as the first time')
})

test('a message rescheduled later is sent at its new time, not its first, after Redis is flushed', async () => {
  const first = new Date(Date.now() + 10_000)
  const id = await sendAt('moved-then-flushed@dest.example', first)
  const witness = await sendAt('moved-witness@dest.example', first)
  const later = new Date(Math.ceil((first.getTime() + 6000) / 1000) * 1000)
  const r = await ob.request('PATCH', `/v1/messages/${id}`, { key, body: { scheduled_at: later.toISOString() } })
  assert.equal(r.status, 200, r.text)
  await flush()
  await events.until(() => events.of(witness, 'delivered').length === 1, 20_000)
  await nothingHappensFor(500) // a send at the first time, due with the witness, would be at the sink by now
  assert.equal(sink.to('moved-then-flushed@dest.example').length, 0, 'not sent at its first time')
  await events.until(() => events.of(id, 'delivered').length === 1, 30_000)
  const [m] = sink.to('moved-then-flushed@dest.example')
  assert.ok(m!.receivedAt >= later.getTime(), `arrived ${later.getTime() - m!.receivedAt} ms before its new time`)
})

test('a send retried with the same Idempotency-Key after Redis is flushed is the same message, delivered once', async () => {
  const fields = { to: 'idem-flushed@dest.example' }
  const first = await send(fields, 'order-flush-1')
  assert.equal(first.status, 202, first.text)
  await events.until(() => events.of(first.body.id, 'delivered').length === 1)
  await flush()
  const again = await send(fields, 'order-flush-1')
  assert.equal(again.status, 202, again.text)
  assert.equal(again.headers.get('idempotent-replayed'), 'true')
  assert.equal(again.text, first.text, 'the first response again')
  const third = await send(fields, 'order-flush-1')
  assert.equal(third.headers.get('idempotent-replayed'), 'true', 'answered from Redis again')
  const other = await send({ to: 'idem-other@dest.example' }, 'order-flush-1')
  assert.equal(other.status, 422, other.text)
  assert.equal(other.body.error.code, 'idempotency_key_reused')
  await nothingHappensFor(1500) // a second message from the replayed sends would be delivered by now
  assert.equal(sink.to('idem-flushed@dest.example').length, 1, 'one delivery')
  assert.equal(sink.to('idem-other@dest.example').length, 0)
})

test('a key removed from Redis alone (as an evicting Redis or a failover to a lagging replica loses one) is still recognised', async () => {
  const fields = { to: 'idem-evicted@dest.example' }
  const first = await send(fields, 'order-evicted-1')
  assert.equal(first.status, 202, first.text)
  const redisKey = REDIS_KEYS.idempotency(org.orgId, 'order-evicted-1')
  const kept = await ob.proc.redis.pttl(redisKey)
  await ob.proc.redis.del(redisKey)
  const again = await send(fields, 'order-evicted-1')
  assert.equal(again.status, 202, again.text)
  assert.equal(again.headers.get('idempotent-replayed'), 'true')
  assert.equal(again.text, first.text)
  const restored = await ob.proc.redis.pttl(redisKey)
  assert.ok(restored > 0 && restored <= kept + 1000, `put back in Redis until the first record's end (${restored} of ${kept} ms)`)
  await events.until(() => events.of(first.body.id, 'delivered').length === 1)
  await nothingHappensFor(1000) // a second message from the replayed send would be delivered by now
  assert.equal(sink.to('idem-evicted@dest.example').length, 1, 'one delivery')
})

test('rate-limit buckets start full after Redis is flushed', async () => {
  const used = await Promise.all(Array.from({ length: 20 }, async () => await ob.request('GET', '/v1/messages?limit=1', { key })))
  const limit = Number(used[0]!.headers.get('ratelimit-limit'))
  const lowest = Math.min(...used.map((r) => Number(r.headers.get('ratelimit-remaining'))))
  assert.ok(lowest <= limit - 10, `20 requests at once used at least 10 tokens (${lowest} of ${limit} left)`)
  await flush()
  const c = await ob.request('GET', '/v1/messages?limit=1', { key })
  assert.equal(Number(c.headers.get('ratelimit-remaining')), limit - 1, 'a full bucket less this request')
})

test('a recipient accepted before Redis is flushed gets a second copy when its message is retried for another', async () => {
  const r = await send({ to: ['progress-ok@dest.example', 'tempfail1times@dest.example'] })
  assert.equal(r.status, 202, r.text)
  const id = r.body.id as string
  await events.until(() => events.of(id, 'delivered').length === 1 && events.of(id, 'deferred').length === 1)
  await flush()
  await events.until(() => sink.to('tempfail1times@dest.example').length === 1, 30_000)
  await eventually(() => sink.to('progress-ok@dest.example').length === 2, 'the second copy')
  const copies = sink.to('progress-ok@dest.example').map((m) => m.headers.get('message-id'))
  assert.equal(copies[0], copies[1], 'the copies carry the same Message-ID')
  assert.equal(events.of(id, 'delivered').filter((e) => e.data.to === 'progress-ok@dest.example').length, 1, 'one delivered event')
})
