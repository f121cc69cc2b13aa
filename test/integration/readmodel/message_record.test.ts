import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { publishQueued, queuedMessage } from '../../helpers/engine_env.ts'
import { eventually } from '../../helpers/waiting.ts'

// One Outbox (gateway, engine, projector) relaying to a sink that refuses `permfail@` addresses with a 550.
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let other: TestOrg

before(async () => {
  sink = await SmtpSink.start()
  ob = await TestOutbox.start({ env: { OB_SMTP_RELAY: sink.url } })
  org = await ob.org()
  other = await ob.org()
})
after(async () => {
  await ob.close()
  await sink.close()
})

async function send (key: string, body: Record<string, unknown>): Promise<string> {
  const res = await ob.request('POST', '/v1/messages/send', { key, body })
  assert.equal(res.status, 202, res.text)
  return res.body.id as string
}

async function message (key: string, id: string, until: (m: any) => boolean): Promise<any> {
  let last: any
  await eventually(async () => {
    const res = await ob.request('GET', `/v1/messages/${id}`, { key })
    last = res.body
    return res.status === 200 && until(res.body)
  }, `message ${id}: ${JSON.stringify(last)}`)
  return last
}

test('a message to three recipients of which one bounces: bounced, each recipient with its own status, 2 of 3 delivered', async () => {
  const id = await send(org.adminKey, {
    from: `app@${org.domain}`,
    to: ['Ann <ok1@dest.example>'],
    cc: ['permfail@dest.example'],
    bcc: ['ok2@dest.example'],
    subject: 'Three',
    text: 'hello'
  })
  const m = await message(org.adminKey, id, (b) => b.status === 'bounced' && b.delivered_count === 2)
  assert.equal(m.recipient_count, 3)
  const by = Object.fromEntries(m.recipients.map((r: any) => [r.address, r]))
  assert.deepEqual(Object.keys(by).sort(), ['ok1@dest.example', 'ok2@dest.example', 'permfail@dest.example'])
  assert.equal(by['ok1@dest.example'].status, 'delivered')
  assert.equal(by['ok2@dest.example'].status, 'delivered')
  assert.equal(by['permfail@dest.example'].status, 'bounced')
  for (const r of m.recipients) {
    assert.equal(r.attempts, 1)
    assert.ok(Number.isFinite(Date.parse(r.last_event_at)), 'last_event_at is a time')
  }
  const list = await ob.request('GET', '/v1/messages?limit=100', { key: org.adminKey })
  const row = list.body.data.find((x: any) => x.id === id)
  assert.equal(row.status, 'bounced')
  assert.equal(row.delivered_count, 2)
  assert.equal(row.recipient_count, 3)
  const bounced = await ob.request('GET', '/v1/messages?status=bounced', { key: org.adminKey })
  assert.ok(bounced.body.data.some((x: any) => x.id === id), 'in the bounced index')
  const delivered = await ob.request('GET', '/v1/messages?status=delivered', { key: org.adminKey })
  assert.ok(!delivered.body.data.some((x: any) => x.id === id), 'not in the delivered index')
})

test('a template send is recorded with its rendered subject', async () => {
  const t = await ob.request('POST', '/v1/templates', {
    key: org.adminKey, body: { name: 'welcome', subject: 'Welcome, {{name}}!', html: '<p>Hi {{name}}</p>' }
  })
  assert.equal(t.status, 201, t.text)
  const id = await send(org.adminKey, {
    from: `app@${org.domain}`, to: ['tpl@dest.example'], template_id: t.body.id, variables: { name: 'Ada' }
  })
  const m = await message(org.adminKey, id, (b) => b.status === 'delivered')
  assert.equal(m.subject, 'Welcome, Ada!')
  const list = await ob.request('GET', '/v1/messages?to=tpl@', { key: org.adminKey })
  assert.equal(list.body.data[0].subject, 'Welcome, Ada!')
})

test('the engine records a template message it is the first to see with its rendered subject', async () => {
  // Published straight to the queue, as if the gateway had died after the 202: only the engine records it.
  const msg = queuedMessage(org, {
    to: ['engine@dest.example'], template_id: 'tpl_00000000000000000000000000', subject: 'Order {{order}} for {{name}}',
    variables: { name: 'Bo', order: 7 }
  })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  const m = await message(org.adminKey, msg.id, (b) => b.status === 'delivered')
  assert.equal(m.subject, 'Order 7 for Bo')
})

test('sandbox traffic is hidden from the default views of messages, events, stats and suppressions, ' +
  'and shown with environment=test', async () => {
  const testKey = await ob.key(org, ['send', 'read'], 'test')
  const id = await send(testKey, { from: `app@${org.domain}`, to: ['sandboxed@dest.example'], subject: 'Sandbox', text: 'x' })
  await message(org.adminKey, id, (b) => b.status === 'delivered')
  const live = await ob.request('GET', '/v1/messages?limit=100', { key: org.adminKey })
  assert.ok(!live.body.data.some((x: any) => x.id === id), 'not in the live list')
  const explicitLive = await ob.request('GET', '/v1/messages?limit=100&environment=live', { key: org.adminKey })
  assert.ok(!explicitLive.body.data.some((x: any) => x.id === id))
  const sandbox = await ob.request('GET', '/v1/messages?environment=test', { key: org.adminKey })
  assert.deepEqual(sandbox.body.data.map((x: any) => x.id), [id])
  assert.equal(sandbox.body.data[0].environment, 'test')

  const liveEvents = await ob.request('GET', '/v1/events?limit=100', { key: org.adminKey })
  assert.ok(!liveEvents.body.data.some((e: any) => e.data.message_id === id), 'no sandbox event in the live events')
  const testEvents = await ob.request('GET', '/v1/events?environment=test', { key: org.adminKey })
  assert.ok(testEvents.body.data.length > 0)
  assert.ok(testEvents.body.data.every((e: any) => e.data.message_id === id))
  const testDelivered = await ob.request('GET', '/v1/events?environment=test&type=delivered', { key: org.adminKey })
  assert.equal(testDelivered.body.data.length, 1)

  const liveStats = await ob.request('GET', '/v1/stats', { key: org.adminKey })
  const testStats = await ob.request('GET', '/v1/stats?environment=test', { key: org.adminKey })
  assert.equal(testStats.body.counts.sent, 1)
  assert.equal(testStats.body.counts.delivered, 1)
  // the live messages of the earlier tests, none of the sandbox one
  assert.equal(liveStats.body.counts.sent, live.body.data.length)

  await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'manual@dest.example' } })
  const liveSup = await ob.request('GET', '/v1/suppressions', { key: org.adminKey })
  assert.ok(liveSup.body.data.some((s: any) => s.email === 'manual@dest.example'))
  const testSup = await ob.request('GET', '/v1/suppressions?environment=test', { key: org.adminKey })
  assert.deepEqual(testSup.body.data, [])

  for (const path of ['/v1/messages', '/v1/events', '/v1/stats', '/v1/suppressions']) {
    const bad = await ob.request('GET', `${path}?environment=staging`, { key: org.adminKey })
    assert.equal(bad.status, 400, path)
    assert.equal(bad.body.error.code, 'validation_error')
  }
})

test('?to= matches a prefix of any recipient address, pages, and never crosses organisations', async () => {
  const ids: string[] = []
  for (const to of ['pre.a@dest.example', 'pre.b@dest.example', 'pre.c@dest.example']) {
    ids.push(await send(org.adminKey, {
      from: `app@${org.domain}`, to: ['someone@dest.example'], cc: [to.toUpperCase()], subject: 'p', text: 'x'
    }))
  }
  const theirs = await send(other.adminKey, { from: `app@${other.domain}`, to: ['pre.a@dest.example'], subject: 'p', text: 'x' })
  await eventually(async () => (await ob.request('GET', '/v1/messages?to=PRE.', { key: org.adminKey })).body.data.length === 3,
    'three readable')
  const all = await ob.request('GET', '/v1/messages?to=PRE.', { key: org.adminKey })
  assert.deepEqual(all.body.data.map((x: any) => x.id), ids, 'address order')
  assert.ok(!all.body.data.some((x: any) => x.id === theirs))
  const page1 = await ob.request('GET', '/v1/messages?to=pre.&limit=2', { key: org.adminKey })
  assert.equal(page1.body.has_more, true)
  const page2 = await ob.request('GET', `/v1/messages?to=pre.&limit=2&cursor=${page1.body.next_cursor}`, { key: org.adminKey })
  assert.deepEqual([...page1.body.data, ...page2.body.data].map((x: any) => x.id), ids)
  assert.equal(page2.body.has_more, false)
  const one = await ob.request('GET', '/v1/messages?to=pre.b', { key: org.adminKey })
  assert.deepEqual(one.body.data.map((x: any) => x.id), [ids[1]])
  const none = await ob.request('GET', '/v1/messages?to=zzz', { key: org.adminKey })
  assert.deepEqual(none.body.data, [])
  const foreignCursor = await ob.request('GET', `/v1/messages?to=other&cursor=${page1.body.next_cursor}`, { key: org.adminKey })
  assert.equal(foreignCursor.status, 400)

  // the other organisation sees only its own, in every view
  await eventually(async () => (await ob.request('GET', '/v1/messages?to=pre.', { key: other.adminKey })).body.data.length === 1,
    'other readable')
  const otherTo = await ob.request('GET', '/v1/messages?to=pre.', { key: other.adminKey })
  assert.deepEqual(otherTo.body.data.map((x: any) => x.id), [theirs])
  const otherTest = await ob.request('GET', '/v1/messages?environment=test', { key: other.adminKey })
  assert.deepEqual(otherTest.body.data, [])
  const otherTestEvents = await ob.request('GET', '/v1/events?environment=test', { key: other.adminKey })
  assert.deepEqual(otherTestEvents.body.data, [])
  const otherTestStats = await ob.request('GET', '/v1/stats?environment=test', { key: other.adminKey })
  assert.equal(otherTestStats.body.counts.sent, 0)
  const otherSup = await ob.request('GET', '/v1/suppressions', { key: other.adminKey })
  assert.deepEqual(otherSup.body.data, [])
  const foreign = await ob.request('GET', `/v1/messages/${ids[0]}`, { key: other.adminKey })
  assert.equal(foreign.status, 403)
})

test('a recipient skipped as suppressed stays in the message record, with the reason of its suppression', async () => {
  const added = await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'skipped@dest.example' } })
  assert.equal(added.status, 201, added.text)
  await eventually(() => ob.proc.cp.isSuppressed(org.orgId, 'skipped@dest.example'), 'the gateway holds the entry')
  const res = await ob.request('POST', '/v1/messages/send', {
    key: org.adminKey,
    body: { from: `app@${org.domain}`, to: ['kept@dest.example'], cc: ['Skipped <SKIPPED@dest.example>'], subject: 'Two', text: 'x' }
  })
  assert.equal(res.status, 202, res.text)
  assert.deepEqual(res.body.suppressed, ['skipped@dest.example'])
  const m = await message(org.adminKey, res.body.id, (b) => b.status === 'delivered')
  assert.equal(m.recipient_count, 2)
  assert.equal(m.delivered_count, 1)
  assert.deepEqual(m.recipients.map((r: any) => [r.address, r.status, r.reason]), [
    ['kept@dest.example', 'delivered', undefined], ['skipped@dest.example', 'suppressed', 'manual']
  ])
})
