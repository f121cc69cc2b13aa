import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { MessageStore } from '../../../stores/read_model/mod.ts'
import { READ_MODEL_KEYS as K } from '../../../stores/read_model/message_store_keys.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { queue, event } from './fixtures.ts'
import { RECIPIENT_STATUS_LUA } from '../../../stores/read_model/recipient_status.ts'
import { messageStatusOf } from '../../../protocol/mod.ts'
import { MESSAGE_STATUS_CASES } from '../../unit/protocol/message_status_cases.ts'

/**
 * Events applied in one turn of the event loop go to Redis together; each keeps its own outcome: an event Redis
 * refuses (here its message's event index holds a string) fails alone, the others of its turn are applied, once.
 */
let ob: TestOutbox
let org: TestOrg
before(async () => {
  ob = await TestOutbox.start({ env: { OB_ROLE: 'gateway' } })
  org = await ob.org()
})
after(async () => { await ob.close() })

test('an event Redis refuses fails alone; the others applied in the same turn are stored and counted once', async () => {
  const store = new MessageStore(ob.proc.redis)
  const msgs = await Promise.all([0, 1, 2].map(async () => await queue(ob, org)))
  await ob.proc.redis.set(K.messageEvents(org.orgId, msgs[1]!.id), 'not a sorted set')
  const events = msgs.map((m) => event(org, m.id, 'delivered'))
  const outcomes = await Promise.allSettled(events.map(async (e) => await store.applyEvent(e)))
  assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled'])
  assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /WRONGTYPE/)
  for (const i of [0, 2]) {
    assert.equal((outcomes[i] as PromiseFulfilledResult<boolean>).value, true)
    const detail = await store.getMessage(org.orgId, msgs[i]!.id)
    assert.equal(detail.status, 'delivered')
    assert.deepEqual(detail.events.map((e) => e.type), ['delivered'])
  }
  // applied again (a redelivery): nothing changes
  assert.deepEqual(await Promise.all([events[0]!, events[2]!].map(async (e) => await store.applyEvent(e))), [false, false])
  assert.equal((await store.getMessage(org.orgId, msgs[0]!.id)).delivered_count, 1)
})

test('the Redis Lua works out a message\'s status by the same rule as protocol/message_status.ts, case by case', async () => {
  const redis = ob.proc.redis
  for (const [i, c] of MESSAGE_STATUS_CASES.entries()) {
    const key = `ob-test:status-rule:${i}`
    const fields: Record<string, string | number> = { base: c.input.base }
    if (c.input.recipients > 0) fields.rn = c.input.recipients
    for (const [s, n] of Object.entries(c.input.counts)) fields[`c:${s}`] = n
    await redis.hset(key, fields)
    const lua = await redis.eval(RECIPIENT_STATUS_LUA + '\nreturn status_from_recipients(KEYS[1])', 1, key)
    assert.equal(lua ?? undefined, c.status, c.name)
    assert.equal(messageStatusOf(c.input), c.status, c.name)
  }
})

test('the record lists every recipient with its own state: a suppressed one with its reason, a retried one keeps the message deferred',
  async () => {
    const store = new MessageStore(ob.proc.redis)
    const m = await queue(ob, org, {
      to: ['a@example.net', 'b@example.net'], suppressed: ['gone@example.net'], suppressed_reasons: ['hard_bounce']
    })
    const fresh = await store.getMessage(org.orgId, m.id)
    assert.equal(fresh.status, 'queued')
    assert.equal(fresh.recipient_count, 3)
    assert.deepEqual(fresh.recipients.map((r) => [r.address, r.status, r.reason]), [
      ['a@example.net', 'queued', undefined], ['b@example.net', 'queued', undefined], ['gone@example.net', 'suppressed', 'hard_bounce']
    ])
    await store.applyEvent(event(org, m.id, 'bounced', new Date(), { to: 'a@example.net' }))
    assert.equal((await store.getMessage(org.orgId, m.id)).status, 'sending')
    await store.applyEvent(event(org, m.id, 'deferred', new Date(), {
      to: 'b@example.net', next_attempt_at: new Date(Date.now() + 60_000).toISOString()
    }))
    const retried = await store.getMessage(org.orgId, m.id)
    assert.equal(retried.status, 'deferred', 'not bounced while a recipient is still retried')
    await store.applyEvent(event(org, m.id, 'delivered', new Date(Date.now() + 1000), { to: 'b@example.net' }))
    const done = await store.getMessage(org.orgId, m.id)
    assert.equal(done.status, 'bounced')
    assert.equal(done.delivered_count, 1)
    const listed = await store.listMessages(org.orgId, { limit: 100, to: 'gone@' })
    assert.deepEqual(listed.data.map((x) => x.id), [m.id], 'found by its suppressed recipient')
    assert.equal(listed.data[0]!.recipient_count, 3)
  })

test('a complained recipient counts as delivered', async () => {
  const store = new MessageStore(ob.proc.redis)
  const m = await queue(ob, org)
  await store.applyEvent(event(org, m.id, 'delivered'))
  await store.applyEvent(event(org, m.id, 'complained', new Date(Date.now() + 1000)))
  const detail = await store.getMessage(org.orgId, m.id)
  assert.equal(detail.status, 'complained')
  assert.deepEqual(detail.recipients.map((r) => r.status), ['complained'])
  assert.equal(detail.delivered_count, 1)
  const listed = await store.listMessages(org.orgId, { limit: 100, status: 'complained' })
  assert.equal(listed.data.find((x) => x.id === m.id)?.delivered_count, 1)
})

test('an open that comes before its delivered event counts its recipient delivered', async () => {
  const store = new MessageStore(ob.proc.redis)
  const m = await queue(ob, org, { to: ['a@example.net', 'b@example.net'] })
  await store.applyEvent(event(org, m.id, 'opened', new Date(), { to: 'a@example.net' }))
  const opened = await store.getMessage(org.orgId, m.id)
  assert.deepEqual(opened.recipients.map((r) => [r.status, r.attempts]), [['delivered', 0], ['queued', 0]])
  assert.equal(opened.status, 'sending')
  assert.equal(opened.delivered_count, 1)
  await store.applyEvent(event(org, m.id, 'delivered', new Date(Date.now() - 1000), { to: 'a@example.net' }))
  await store.applyEvent(event(org, m.id, 'clicked', new Date(), { to: 'b@example.net' }))
  const both = await store.getMessage(org.orgId, m.id)
  assert.deepEqual(both.recipients.map((r) => [r.status, r.attempts]), [['delivered', 1], ['delivered', 0]])
  assert.equal(both.status, 'delivered')
  assert.equal(both.delivered_count, 2)
})
