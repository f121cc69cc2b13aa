import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { EventWatcher } from '../../helpers/engine_env.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { send, sendBody } from '../faults/fault_env.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { putWebhook } from '../../helpers/webhooks.ts'
import { HOLD_RECHECK_MS } from '../../../protocol/mod.ts'

/**
 * Queues operators steer, through real servers: a gateway and engine relaying to an SMTP sink whose `tempfail…`
 * recipients answer 451 once. Holds keep mail waiting without attempts, release lets it go, retry now sends deferred
 * mail without waiting for its schedule (10 minutes here), a bounce of held mail ends each recipient with the
 * `operator` category; the list shows depth and age; organisation keys never reach the routes; every action is a
 * security log line naming the operator key.
 */
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let key: string
let opKey: string
let opKeyId: string
let events: EventWatcher
let rx: HttpsReceiver
const logs: Array<Record<string, unknown>> = []

before(async () => {
  sink = await SmtpSink.start({ tempfailTimes: 1 })
  rx = await HttpsReceiver.start()
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(JSON.parse(String(chunk)) as Record<string, unknown>); cb() } })
  ob = await TestOutbox.start({
    env: {
      OB_SMTP_RELAY: sink.url, OB_DELIVERY_RETRY_SCHEDULE: '600,600', OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true'
    },
    log: { level: 'info', stream }
  })
  org = await ob.org()
  key = await ob.key(org, ['send', 'read'])
  const made = await ob.proc.cp.operatorKeys.create('queue-ops')
  opKey = made.value
  opKeyId = made.record.id
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await sink.close()
  await rx.close()
})

const op = async (method: string, path: string, body?: unknown): ReturnType<TestOutbox['request']> =>
  await ob.request(method, `/v1/operator/queues${path}`, { key: opKey, ...(body !== undefined ? { body } : {}) })

interface Queue {
  value: string
  recipients: number
  messages: number
  oldest_accepted_at: string | null
  next_attempt_at: string | null
  last_reply: { at: string, text: string } | null
  held: boolean
}

async function queue (by: string, value: string): Promise<Queue | undefined> {
  const res = await op('GET', `?by=${by}&limit=100`)
  assert.equal(res.status, 200, res.text)
  return (res.body.data as Queue[]).find((q) => q.value === value)
}

async function sent (from: TestOrg, sendKey: string, to: string[]): Promise<string> {
  const r = await send(ob.baseUrl, sendKey, sendBody(from, to[0]!, { to }))
  assert.equal(r.status, 202, r.error ?? r.code)
  return r.id!
}

test('a held domain gets nothing and spends no attempt; released, it is delivered; the list shows it', async () => {
  const held = await op('POST', '/hold', { by: 'domain', value: 'Held.Example.', reason: 'receiver maintenance' })
  assert.equal(held.status, 201, held.text)
  assert.deepEqual(held.body.selector, { by: 'domain', value: 'held.example' })
  assert.deepEqual(held.body.held_by, { key_id: opKeyId, name: 'queue-ops' })
  const again = await op('POST', '/hold', { by: 'domain', value: 'held.example' })
  assert.equal(again.status, 200, 'holding what is held answers the hold in force')
  assert.equal(again.body.held_at, held.body.held_at)

  const id = await sent(org, key, ['alice@held.example', 'bob@open.example'])
  await events.until(() => events.of(id, 'delivered').length === 1)
  assert.equal(sink.to('bob@open.example').length, 1, 'the other recipient of the message goes at once')
  const listed = await eventually(async () => await queue('domain', 'held.example'), 'held.example listed')
  assert.equal(listed.recipients, 1)
  assert.equal(listed.messages, 1)
  assert.equal(listed.held, true)
  assert.ok(listed.oldest_accepted_at !== null && Date.parse(listed.oldest_accepted_at) <= Date.now())
  assert.ok(listed.next_attempt_at !== null)
  const holds = await op('GET', '/holds')
  assert.deepEqual(holds.body.data.map((h: { selector: unknown }) => h.selector), [{ by: 'domain', value: 'held.example' }])

  // longer than a hold's look (HOLD_RECHECK_MS): the held recipient was looked at again and still not sent
  await nothingHappensFor(HOLD_RECHECK_MS + 1500)
  assert.equal(sink.to('alice@held.example').length, 0)
  assert.equal(events.of(id, 'deferred').length, 0, 'no attempt, no event')
  assert.equal(await ob.proc.redis.hget(`ob:done:${id}`, 'a:alice@held.example'), null, 'no attempt counted')

  const released = await op('POST', '/release', { by: 'domain', value: 'held.example' })
  assert.equal(released.status, 200, released.text)
  assert.equal((await op('POST', '/release', { by: 'domain', value: 'held.example' })).body.error.code, 'not_found')
  await events.until(() => events.of(id, 'delivered').length === 2)
  assert.equal(sink.to('alice@held.example').length, 1)
  assert.equal(events.of(id, 'deferred').length, 0)
  await eventually(async () => await queue('domain', 'held.example') === undefined, 'held.example leaves the list once delivered')
})

test('an organisation\'s hold keeps its mail and no other organisation\'s', async () => {
  const other = await ob.org()
  const otherKey = await ob.key(other, ['send'])
  const otherEvents = await EventWatcher.start(ob.proc.nc, other.orgId)
  try {
    assert.equal((await op('POST', '/hold', { by: 'organization', value: other.orgId })).status, 201)
    const heldId = await sent(other, otherKey, ['carol@shared.example'])
    const freeId = await sent(org, key, ['dave@shared.example'])
    await events.until(() => events.of(freeId, 'delivered').length === 1)
    const q = await eventually(async () => await queue('organization', other.orgId), 'the organisation listed')
    assert.equal(q.recipients, 1)
    assert.equal(q.held, true)
    assert.equal(otherEvents.of(heldId).length, 0)
    assert.equal(sink.to('carol@shared.example').length, 0)
    assert.equal((await op('POST', '/release', { by: 'organization', value: other.orgId })).status, 200)
    await otherEvents.until(() => otherEvents.of(heldId, 'delivered').length === 1)
  } finally {
    otherEvents.stop()
  }
})

test('retry now: deferred mail is attempted at once instead of 10 minutes later', async () => {
  const id = await sent(org, key, ['tempfail-now@slow.example'])
  await events.until(() => events.of(id, 'deferred').length === 1)
  const d = events.of(id, 'deferred')[0]!.data
  assert.equal(Date.parse(String(d.next_attempt_at)) - Date.parse(String(d.deferred_at)), 600_000)
  const q = await eventually(async () => await queue('domain', 'slow.example'), 'slow.example listed')
  assert.equal(q.recipients, 1)
  assert.match(q.last_reply?.text ?? '', /^451/)
  assert.ok(Date.parse(q.next_attempt_at!) > Date.now() + 500_000, 'its next attempt is the schedule\'s')
  assert.ok((await queue('organization', org.orgId)) !== undefined)

  const retried = await op('POST', '/retry', { by: 'domain', value: 'slow.example' })
  assert.equal(retried.status, 200, retried.text)
  assert.equal(retried.body.woken, 1)
  assert.equal(retried.body.order.action, 'retry')
  assert.equal(retried.body.order.issued_by.key_id, opKeyId)
  await events.until(() => events.of(id, 'delivered').length === 1)
  assert.equal(sink.to('tempfail-now@slow.example').length, 1)
  assert.equal(events.of(id, 'deferred').length, 1)
  await eventually(async () => await queue('domain', 'slow.example') === undefined, 'slow.example leaves the list')
})

test('bounce held mail: each recipient\'s bounced event says operator, in the events API too; nothing is sent', async () => {
  assert.equal((await op('POST', '/hold', { by: 'domain', value: 'gone.example' })).status, 201)
  await putWebhook(ob, org, { url: rx.url('/hook'), events: ['bounced'] })
  const id = await sent(org, key, ['x@gone.example', 'y@gone.example'])
  await eventually(async () => (await queue('domain', 'gone.example'))?.recipients === 2, 'both recipients listed')
  const bounced = await op('POST', '/bounce', { by: 'domain', value: 'gone.example', only_held: true, reason: 'domain retired' })
  assert.equal(bounced.status, 200, bounced.text)
  assert.equal(bounced.body.order.only_held, true)
  assert.equal(bounced.body.woken, 0, 'held mail meets the order at its next look')
  await events.until(() => events.of(id, 'bounced').length === 2)
  for (const e of events.of(id, 'bounced')) {
    assert.equal(e.data.bounce_category, 'operator')
    assert.equal(e.data.bounce_type, 'hard')
    assert.match(String(e.data.bounce_message), /domain retired/)
  }
  const api = await eventually(async () => {
    const res = await ob.request('GET', `/v1/events?message_id=${id}&type=bounced`, { key })
    return res.body?.data?.length === 2 ? res.body.data as Array<{ data: Record<string, unknown> }> : undefined
  }, 'the bounced events in the events API')
  assert.deepEqual(api.map((e) => e.data.bounce_category), ['operator', 'operator'])
  const posted = (await rx.waitFor(2, { timeoutMs: 20_000 }))
    .map((r) => JSON.parse(r.rawBody.toString()) as { type: string, data: Record<string, unknown> })
  assert.deepEqual(posted.map((p) => [p.type, p.data.bounce_category]), [['bounced', 'operator'], ['bounced', 'operator']])
  assert.equal(sink.to('x@gone.example').length + sink.to('y@gone.example').length, 0)
  await eventually(async () => await queue('domain', 'gone.example') === undefined, 'gone.example leaves the list')
  assert.equal((await op('POST', '/release', { by: 'domain', value: 'gone.example' })).status, 200)
})

test('bounce deferred mail: it is woken and bounced now, not at its next attempt 10 minutes later', async () => {
  const id = await sent(org, key, ['tempfail-late@late.example'])
  await events.until(() => events.of(id, 'deferred').length === 1)
  await eventually(async () => await queue('domain', 'late.example'), 'late.example listed')
  const bounced = await op('POST', '/bounce', { by: 'domain', value: 'late.example' })
  assert.equal(bounced.status, 200, bounced.text)
  assert.equal(bounced.body.woken, 1)
  await events.until(() => events.of(id, 'bounced').length === 1)
  assert.equal(events.of(id, 'bounced')[0]!.data.bounce_category, 'operator')
  assert.equal(sink.to('tempfail-late@late.example').length, 0, 'the one attempt was the 451')
  await eventually(async () => await queue('domain', 'late.example') === undefined, 'late.example leaves the list')
})

test('organisation keys get 403 on every queue route, no key 401; bad selectors are 400', async () => {
  const routes: Array<[string, string, unknown?]> = [
    ['GET', ''], ['GET', '/holds'], ['POST', '/hold', { by: 'domain', value: 'x.example' }],
    ['POST', '/release', { by: 'domain', value: 'x.example' }], ['POST', '/retry', { by: 'domain', value: 'x.example' }],
    ['POST', '/bounce', { by: 'domain', value: 'x.example' }]
  ]
  for (const [method, path, body] of routes) {
    const admin = await ob.request(method, `/v1/operator/queues${path}`, { key: org.adminKey, ...(body !== undefined ? { body } : {}) })
    assert.equal(admin.status, 403, `${method} ${path}: ${admin.text}`)
    assert.equal(admin.body.error.code, 'forbidden')
    const none = await ob.request(method, `/v1/operator/queues${path}`, body !== undefined ? { body } : {})
    assert.equal(none.status, 401, `${method} ${path}`)
  }
  assert.equal((await op('POST', '/hold', { by: 'planet', value: 'x.example' })).status, 400)
  const bad = await op('POST', '/hold', { by: 'domain', value: 'not a domain' })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.error.field, 'value')
  assert.equal((await op('POST', '/hold', { by: 'organization', value: 'example.com' })).status, 400)
  assert.equal((await op('GET', '?by=planet')).status, 400)
})

test('every action is one security log line naming the operator key', async () => {
  const lines = logs.filter((l) => l.event === 'operator.queue_changed')
  const actions = new Set(lines.map((l) => l.action))
  for (const a of ['hold', 'release', 'retry', 'bounce']) assert.ok(actions.has(a), `a ${a} line`)
  for (const l of lines) {
    assert.equal(l.kind, 'security')
    assert.equal(l.operator_key_id, opKeyId)
    assert.equal(l.operator_key_name, 'queue-ops')
    assert.equal(typeof l.by, 'string')
    assert.equal(typeof l.value, 'string')
  }
  const bounce = lines.find((l) => l.action === 'bounce')!
  assert.match(String(bounce.order_id), /^qo_/)
  assert.equal(bounce.reason, 'domain retired')
  assert.ok(!JSON.stringify(lines).includes(opKey), 'never the key value')
})
