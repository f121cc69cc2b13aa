import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstream } from '@nats-io/jetstream'
import { MessageStore } from '../../../stores/read_model/mod.ts'
import { connectNats } from '../../../stores/clients/mod.ts'
import { eventSubject, newId } from '../../../protocol/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { queue, event, publish } from './fixtures.ts'
import { eventually } from '../../helpers/waiting.ts'

let ob: TestOutbox
let org: TestOrg
let key: string
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  key = await ob.key(org, ['read'])
})
after(async () => { await ob.close() })

async function message (id: string): Promise<any> {
  const r = await ob.request('GET', `/v1/messages/${id}`, { key })
  assert.equal(r.status, 200)
  return r.body
}

async function stats (): Promise<Record<string, number>> {
  const r = await ob.request('GET', '/v1/stats', { key })
  assert.equal(r.status, 200)
  return r.body.counts
}

test('events published to OB_EVENTS reach the message through the projector', async () => {
  const msg = await queue(ob, org)
  const t0 = Date.now()
  const delivered = event(org, msg.id, 'delivered', new Date(t0), { smtp_response: '250 2.0.0 OK' })
  const opened = event(org, msg.id, 'opened', new Date(t0 + 1000), { user_agent: 'UA' })
  await publish(ob, delivered)
  await publish(ob, opened)
  const m = await eventually(async () => { const m = await message(msg.id); return m.events.length === 2 ? m : undefined }, 'two events')
  assert.equal(m.status, 'delivered', 'opened does not change the status')
  assert.deepEqual(m.events, [
    { id: delivered.id, type: 'delivered', timestamp: delivered.timestamp, data: delivered.data },
    { id: opened.id, type: 'opened', timestamp: opened.timestamp, data: opened.data }
  ])
  const listed = await ob.request('GET', '/v1/messages?status=delivered', { key })
  assert.ok(listed.body.data.some((x: { id: string }) => x.id === msg.id), 'listed under its new status')
  const queued = await ob.request('GET', '/v1/messages?status=queued', { key })
  assert.ok(!queued.body.data.some((x: { id: string }) => x.id === msg.id), 'no longer listed as queued')
})

test('replaying the same event id changes nothing: events, status or counts', async () => {
  const msg = await queue(ob, org)
  const bounced = event(org, msg.id, 'bounced', new Date(), { bounce_type: 'hard', bounce_code: '550' })
  await publish(ob, bounced)
  await eventually(async () => (await message(msg.id)).status === 'bounced' ? true : undefined, 'bounced')
  const before = await stats()
  // A redelivery past JetStream's duplicate window: same event id, different stream message.
  await publish(ob, bounced, `${bounced.id}-again`)
  await publish(ob, bounced, `${bounced.id}-third`)
  // A marker published after the replays: once it shows, the replays have been processed too.
  const marker = event(org, msg.id, 'opened')
  await publish(ob, marker)
  const m = await eventually(async () => { const m = await message(msg.id); return m.events.length === 2 ? m : undefined }, 'marker')
  assert.deepEqual(m.events.map((e: { id: string }) => e.id), [bounced.id, marker.id])
  const after = await stats()
  assert.equal(after.bounced, before.bounced, 'bounced counted once')
  assert.equal(after.opened, before.opened + 1)
  assert.equal(await new MessageStore(ob.proc.redis).applyEvent(bounced), false, 'applying directly again is a no-op')
  const ev = await ob.request('GET', `/v1/events?message_id=${msg.id}`, { key })
  assert.equal(ev.body.data.length, 2)
})

test('status never moves backwards: precedence over arrival order', async () => {
  const store = new MessageStore(ob.proc.redis)
  const t = Date.now()
  const cases: Array<[string[], string]> = [
    [['deferred', 'delivered'], 'delivered'],
    [['delivered', 'deferred'], 'delivered'],
    [['deferred', 'deferred', 'bounced'], 'bounced'],
    [['bounced', 'delivered'], 'bounced'],
    [['delivered', 'complained'], 'complained'],
    [['complained', 'delivered', 'deferred'], 'complained'],
    [['delivered', 'opened', 'clicked', 'unsubscribed'], 'delivered'],
    [['failed', 'bounced'], 'failed']
  ]
  for (const [types, expected] of cases) {
    const msg = await queue(ob, org)
    let i = 0
    for (const type of types) await store.applyEvent(event(org, msg.id, type as never, new Date(t + i++ * 1000), { n: i }))
    const m = await message(msg.id)
    assert.equal(m.status, expected, types.join(' → '))
    assert.equal(m.events.length, types.length)
  }
})

test('an event that arrives before the message is recorded keeps its status', async () => {
  const store = new MessageStore(ob.proc.redis)
  const recorded = await queue(ob, org)
  const later = { ...recorded, id: newId('msg') }
  await store.applyEvent(event(org, later.id, 'delivered'))
  await store.recordQueued(later, 'queued')
  const m = await message(later.id)
  assert.equal(m.status, 'delivered')
  assert.equal(m.events.length, 1)
  const listed = await ob.request('GET', '/v1/messages?status=delivered', { key })
  assert.ok(listed.body.data.some((x: { id: string }) => x.id === later.id))
})

test('events published while no projector runs are applied when it starts again', async () => {
  const nats = await ServerProcess.nats()
  const redis = await ServerProcess.redis()
  try {
    const first = await TestOutbox.start({ nats, redis })
    const o = await first.org()
    const msg = await queue(first, o)
    await first.close()
    const nc = await connectNats([nats.url], 'test-publisher')
    await jetstream(nc).publish(eventSubject(o.orgId, 'delivered'), JSON.stringify(event(o, msg.id, 'delivered')))
    await nc.drain()
    const second = await TestOutbox.start({ nats, redis })
    try {
      const k = await second.key(o, ['read'])
      await eventually(async () => {
        const r = await second.request('GET', `/v1/messages/${msg.id}`, { key: k })
        return r.body.status === 'delivered' ? true : undefined
      }, 'delivered after restart')
    } finally {
      await second.close()
    }
  } finally {
    await nats.dispose()
    await redis.dispose()
  }
})
