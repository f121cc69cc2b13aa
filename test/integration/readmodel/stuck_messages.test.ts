import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually } from '../../helpers/waiting.ts'

// A message deferred (451) by an engine that then stops: its retry never happens, and once `next_attempt_at` is more
// than the grace (1 s here) in the past it reads as stuck; an engine started again delivers it and the flag clears.
const GRACE_MS = 1000
// The second attempt is due 3 s after the first; the long last step keeps the message from giving up by age.
const SCHEDULE_S = '3,600'

let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let gateway: TestOutbox
let engine: TestOutbox | undefined
let org: TestOrg
let key: string

async function startEngine (): Promise<TestOutbox> {
  return await TestOutbox.start({
    nats, redis, env: { OB_ROLE: 'engine', OB_SMTP_RELAY: sink.url, OB_DELIVERY_RETRY_SCHEDULE: SCHEDULE_S }
  })
}

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start({ tempfailTimes: 1 })
  gateway = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway', OB_STUCK_AFTER_MS: String(GRACE_MS) } })
  engine = await startEngine()
  org = await gateway.org()
  key = await gateway.key(org, ['send', 'read'])
})
after(async () => {
  await engine?.close()
  await gateway.close()
  await sink.close()
  await nats.dispose()
  await redis.dispose()
})

async function send (to: string | string[]): Promise<string> {
  const r = await gateway.request('POST', '/v1/messages/send', {
    key, body: { from: `App <hello@${org.domain}>`, to, subject: 'Stuck?', text: 'hello' }
  })
  assert.equal(r.status, 202, r.text)
  return (r.body as { id: string }).id
}

async function message (id: string): Promise<any> {
  const r = await gateway.request('GET', `/v1/messages/${id}`, { key })
  assert.equal(r.status, 200, r.text)
  return r.body
}

/** The message as GET /v1/messages/{id} shows it, once `ok` holds for it (read every 200 ms). */
async function messageOnce (id: string, what: string, ok: (m: any) => boolean, timeoutMs?: number): Promise<any> {
  let last: unknown
  return await eventually(async () => { const m = last = await message(id); return ok(m) ? m : undefined },
    () => `${what}; last ${JSON.stringify(last)}`, timeoutMs, 200)
}

async function stuckIds (environment = 'live'): Promise<string[]> {
  const r = await gateway.request('GET', `/v1/messages?stuck=true&environment=${environment}`, { key })
  assert.equal(r.status, 200, r.text)
  return (r.body as { data: Array<{ id: string, stuck: boolean }> }).data.map((m) => { assert.equal(m.stuck, true); return m.id })
}

test('a deferred message whose retry is overdue is stuck until an engine delivers it', { timeout: 90_000 }, async () => {
  const fine = await send('someone@dest.example')
  const id = await send('tempfail-stuck@dest.example')
  // One recipient bounced, the other greylisted: the message reads `deferred` while one recipient still waits for a retry.
  const mixed = await send(['permfail-two@dest.example', 'tempfail-two@dest.example'])
  const delivered = await messageOnce(fine, 'first delivered', (m) => m.status === 'delivered')
  assert.equal(delivered.stuck, false)
  assert.equal(delivered.next_attempt_at, undefined, 'a delivered message waits for no attempt')

  const deferred = await messageOnce(id, 'deferred', (m) => m.status === 'deferred')
  const event = deferred.events.find((e: any) => e.type === 'deferred')
  assert.equal(deferred.next_attempt_at, new Date(Date.parse(event.data.next_attempt_at)).toISOString(), 'the deferral\'s next attempt')
  const partly = await messageOnce(mixed, 'bounced and deferred',
    (m) => m.recipients.map((r: any) => r.status).sort().join() === 'bounced,deferred')
  assert.equal(partly.status, 'deferred', 'not bounced while a recipient is still retried')
  const retry = partly.events.find((e: any) => e.type === 'deferred')
  assert.equal(partly.next_attempt_at, new Date(Date.parse(retry.data.next_attempt_at)).toISOString(),
    'the deferred recipient\'s next attempt')

  await engine!.close()
  engine = undefined
  const due = Date.parse(deferred.next_attempt_at)
  const stuck = await messageOnce(id, 'stuck', (m) => m.stuck === true)
  assert.equal(stuck.status, 'deferred')
  assert.ok(Date.now() - due > GRACE_MS, 'flagged only past the grace')
  await messageOnce(mixed, 'the bounced one stuck too', (m) => m.stuck === true)
  assert.deepEqual((await stuckIds()).sort(), [id, mixed].sort(), 'the stuck filter lists both, and not the delivered one')
  assert.deepEqual(await stuckIds('test'), [], 'nothing stuck in the sandbox')
  for (const [filter, expected] of [['&to=tempfail-stuck', [id]], ['&to=tempfail-two', [mixed]], ['&to=someone@', []],
    ['&status=deferred', [id, mixed].sort()], ['&status=bounced', []], ['&status=delivered', []]] as const) {
    const r = await gateway.request('GET', `/v1/messages?stuck=true${filter}`, { key })
    assert.deepEqual((r.body as { data: Array<{ id: string }> }).data.map((m) => m.id).sort(), expected, filter)
  }
  const listed = await gateway.request('GET', '/v1/messages', { key })
  const rows = (listed.body as { data: Array<{ id: string, stuck: boolean, next_attempt_at?: string }> }).data
  assert.deepEqual(rows.map((m) => [m.id, m.stuck]), [[mixed, true], [id, true], [fine, false]])
  assert.equal(rows[1]!.next_attempt_at, deferred.next_attempt_at)

  engine = await startEngine()
  const done = await messageOnce(id, 'delivered after the restart', (m) => m.status === 'delivered', 40_000)
  assert.equal(done.stuck, false)
  assert.equal(done.next_attempt_at, undefined)
  const settled = await messageOnce(mixed, 'the greylisted recipient delivered', (m) => m.delivered_count === 1, 40_000)
  assert.equal(settled.status, 'bounced')
  assert.equal(settled.stuck, false, 'every recipient has its outcome')
  assert.equal(settled.next_attempt_at, undefined)
  assert.deepEqual(await stuckIds(), [], 'no longer listed as stuck')
})

test('?stuck takes only true or false', async () => {
  const r = await gateway.request('GET', '/v1/messages?stuck=yes', { key })
  assert.equal(r.status, 400)
  assert.equal((r.body as any).error.code, 'validation_error')
  assert.match(r.text, /stuck/)
  const all = await gateway.request('GET', '/v1/messages?stuck=false', { key })
  assert.equal(all.status, 200)
})

test('with no engine running, queued and scheduled messages are stuck past their time; ' +
  'a reschedule or a cancel clears it', { timeout: 60_000 }, async () => {
  await engine?.close()
  engine = undefined
  const at = new Date(Date.now() + 4000).toISOString()
  const sendAt = async (to: string, scheduledAt?: string): Promise<string> => {
    const r = await gateway.request('POST', '/v1/messages/send', {
      key,
      body: {
        from: `App <hello@${org.domain}>`, to, subject: 'Waiting', text: 'hello',
        ...(scheduledAt !== undefined ? { scheduled_at: scheduledAt } : {})
      }
    })
    assert.equal(r.status, 202, r.text)
    return (r.body as { id: string }).id
  }
  const queued = await sendAt('q@dest.example')
  const scheduled = await sendAt('s@dest.example', at)
  const moved = await sendAt('m@dest.example', at)
  // A message is readable within a second of its 202.
  const recorded = async (id: string): Promise<any> => (await gateway.request('GET', `/v1/messages/${id}`, { key })).body
  await eventually(async () => (await Promise.all([queued, scheduled, moved].map(recorded))).every((m) => m?.id !== undefined),
    'recorded', undefined, 200)
  const before = await message(scheduled)
  assert.equal(before.status, 'scheduled')
  assert.equal(before.next_attempt_at, new Date(Date.parse(at)).toISOString(), 'a scheduled message is due at its scheduled time')
  assert.equal(before.stuck, false, 'not before its time')
  assert.equal((await message(queued)).next_attempt_at, (await message(queued)).created_at, 'a queued message is due at once')

  await messageOnce(moved, 'stuck', (m) => m.stuck === true)
  assert.deepEqual(await stuckIds(), [moved, scheduled, queued], 'most recently due first')
  const later = new Date(Date.now() + 3600_000).toISOString()
  assert.equal((await gateway.request('PATCH', `/v1/messages/${moved}`, { key, body: { scheduled_at: later } })).status, 200)
  const rescheduled = await message(moved)
  assert.equal(rescheduled.stuck, false)
  assert.equal(rescheduled.next_attempt_at, new Date(Date.parse(later)).toISOString())
  assert.equal((await gateway.request('POST', `/v1/messages/${scheduled}/cancel`, { key })).status, 200)
  const canceled = await message(scheduled)
  assert.equal(canceled.status, 'canceled')
  assert.equal(canceled.stuck, false)
  assert.deepEqual(await stuckIds(), [queued])
})
