// test-group: long-wait: the projector's backoff is watched over a window of several seconds of real time.
import { test, before, after } from 'node:test'
import { Writable } from 'node:stream'
import assert from 'node:assert/strict'
import type { Redis } from 'ioredis'
import type { Transporter } from 'nodemailer'
import { jetstreamManager } from '@nats-io/jetstream'
import { connectRedis, redisReady } from '../../../stores/clients/mod.ts'
import { CONSUMER_PROJECTOR, STREAM_EVENTS } from '../../../protocol/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { fillRedis, freeRedis } from '../../helpers/own_redis.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { addRoute, inboundClient, rejectedCode } from '../../helpers/inbound.ts'
import { queue, event, publish } from '../readmodel/fixtures.ts'
import { sleep } from './fault_env.ts'
import { submissionClient } from '../../helpers/submission.ts'
import { freePort } from '../../helpers/ports.ts'
import { RawSmtp } from '../../helpers/raw_smtp.ts'
import { eventually } from '../../helpers/waiting.ts'

let redisServer: ServerProcess
let redis: Redis
let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let key: string
let events: EventReader
let smtp: Transporter
let submissionPort: number
/** The process's log lines, as JSON. */
const logLines: Array<{ level: number, part?: string, msg: string }> = []
const logStream = new Writable({
  write (chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n')) if (line !== '') logLines.push(JSON.parse(line))
    done()
  }
})

before(async () => {
  redisServer = await ServerProcess.redis()
  redis = connectRedis(redisServer.url, 'test-filler')
  await redisReady(redis)
  dns = await DnsServer.start({})
  submissionPort = await freePort()
  ob = await TestOutbox.start({
    redis: redisServer,
    env: { OB_DNS_SERVERS: dns.address, OB_SMTP_SUBMISSION_PORT: String(submissionPort) },
    log: { level: 'info', stream: logStream }
  })
  org = await ob.org()
  key = await ob.key(org, ['send', 'read', 'manage'])
  events = await EventReader.open(ob.proc.nc, org.orgId)
  smtp = inboundClient(ob)
})
after(async () => {
  smtp.close()
  events.close()
  await ob.close()
  await dns.close()
  redis.disconnect()
  await redisServer.dispose()
})

/** Checks here make requests or SMTP sessions against a full Redis: looked at every 100 ms, for up to 30 s. */
const WAIT_MS = 30_000
const EVERY_MS = 100

/** A metric's value; NaN when it is not exported (every comparison with it then fails). */
async function metric (name: string): Promise<number> {
  const r = await ob.request('GET', '/metrics')
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(r.text)
  return m === null ? NaN : Number(m[1])
}

/** How many times the projector's consumer has been handed an event, first deliveries and redeliveries alike. */
async function projectorDeliveries (): Promise<number> {
  const jsm = await jetstreamManager(ob.proc.nc)
  return (await jsm.consumers.info(STREAM_EVENTS, CONSUMER_PROJECTOR)).delivered.consumer_seq
}

test('Redis full: readyz 503 naming redis, reads and health still answer, changes get store_full, ' +
  'then all recovers', { timeout: 120_000 }, async () => {
  const ready = await ob.request('GET', '/readyz')
  assert.equal(ready.status, 200)
  assert.deepEqual(ready.body, { status: 'ok', checks: { nats: 'ok', redis: 'ok', queue: 'ok' } })
  const before = await queue(ob, org)

  await fillRedis(redis)
  const full = await ob.request('GET', '/readyz')
  assert.equal(full.status, 503)
  assert.deepEqual(full.body, { status: 'unavailable', checks: { nats: 'ok', redis: 'full', queue: 'ok' } })

  // Reads that need no Redis write answer, however many: the limiter meters them in the gateway's own buckets.
  for (let i = 0; i < 20; i++) {
    for (const path of ['/v1/whoami', '/v1/domains', `/v1/messages/${before.id}`]) {
      const r = await ob.request('GET', path, { key })
      assert.equal(r.status, 200, `${path}: ${r.text}`)
      assert.ok(r.headers.get('ratelimit-remaining') !== null, 'still metered')
    }
    assert.equal((await ob.request('GET', '/healthz')).status, 200)
    assert.equal((await ob.request('GET', '/metrics')).status, 200)
  }
  assert.ok(await metric('outbox_rate_limit_local_decisions_total') >= 60)
  const send = await ob.request('POST', '/v1/messages/send', {
    key, body: { from: `a@${org.domain}`, to: 'x@example.net', subject: 's', text: 't' }
  })
  assert.equal(send.status, 503, send.text)
  assert.equal(send.body.error.code, 'store_full')
  assert.equal(send.headers.get('retry-after'), '10')
  const analyzed = await ob.request('POST', '/v1/messages/analyze', { key, body: { subject: 'Hello', html: '<p>Hi</p>' } })
  assert.equal(analyzed.status, 200, 'analysis stores nothing, so it goes on')
  const submission = submissionClient(submissionPort, key)
  try {
    await submission.sendMail({ from: `a@${org.domain}`, to: 'x@example.net', subject: 's', text: 't' })
    assert.fail('SMTP submission accepted a message while Redis is full')
  } catch (err) {
    assert.match((err as { response?: string }).response ?? '', /^451 4\.3\.1 The data store is full; try again later$/)
  } finally {
    submission.close()
  }

  await freeRedis(redis)
  const back = await ob.request('GET', '/readyz')
  assert.equal(back.status, 200, back.text)
  assert.deepEqual(back.body, { status: 'ok', checks: { nats: 'ok', redis: 'ok', queue: 'ok' } })
  assert.equal((await ob.request('POST', '/v1/messages/send', {
    key, body: { from: `a@${org.domain}`, to: 'x@example.net', subject: 's', text: 't' }
  })).status, 202)
})

test('Redis full: the projector tries again seldom, not every event every second, ' +
  'and catches up once there is room', { timeout: 180_000 }, async (t) => {
  const N = 100
  const msgs = []
  for (let i = 0; i < N; i++) msgs.push(await queue(ob, org))
  const logsFrom = logLines.length
  const deliveries0 = await projectorDeliveries()
  const failures0 = await metric('outbox_projector_apply_failures_total')
  await fillRedis(redis)
  for (const m of msgs) await publish(ob, event(org, m.id, 'delivered', new Date(), { smtp_response: '250 OK' }))
  // Applying has failed, and every event has been handed out at least once (on a busy machine the publishes above
  // can outlast the projector's first failures, and the events after them reach it while it backs off).
  await eventually(async () => await metric('outbox_projector_apply_failures_total') > failures0 &&
    await projectorDeliveries() >= deliveries0 + N, 'the projector to fail with every event handed out', 2 * WAIT_MS, EVERY_MS)

  // A window of at least 6 s: every event would be handed out again about 6 times if each failure were retried
  // after a second. JetStream's own count of deliveries shows what the projector was handed, whatever it counts.
  const deliveries1 = await projectorDeliveries()
  const failures1 = await metric('outbox_projector_apply_failures_total')
  const started = Date.now()
  await sleep(6000)
  const deliveries2 = await projectorDeliveries()
  const failures2 = await metric('outbox_projector_apply_failures_total')
  const windowMs = Date.now() - started
  t.diagnostic(`${N} events pending; in ${windowMs} ms: ${deliveries2 - deliveries1} deliveries, ${failures2 - failures1} failed applies`)
  assert.ok(deliveries2 - deliveries1 <= N / 4, `${deliveries2 - deliveries1} deliveries of ${N} pending events in ${windowMs} ms`)
  const backoffS = await metric('outbox_projector_backoff_seconds')
  // One try a round, the wait doubling from 250 ms: at most log2(window / 250 ms) + 2 rounds in the window.
  assert.ok(failures2 - failures1 <= Math.log2(windowMs / 250) + 2, `${failures2 - failures1} failed applies in ${windowMs} ms`)
  assert.ok(backoffS >= 1, 'the wait grew')
  const status = await ob.request('GET', `/v1/messages/${msgs[0]!.id}`, { key })
  assert.equal(status.body.status, 'queued', 'nothing applied while full')

  await freeRedis(redis)
  for (const m of msgs) {
    await eventually(async () => {
      const r = await ob.request('GET', `/v1/messages/${m.id}`, { key })
      return r.body.status === 'delivered'
    }, `${m.id} delivered in the read model`, 90_000, EVERY_MS)
  }
  assert.equal(await metric('outbox_projector_backoff_seconds'), 0)
  // A few lines for the whole outage, none per event: one when it starts (the wait reaching 30 s would be another),
  // one when the projector resumes.
  const projectorLines = logLines.slice(logsFrom).filter((l) => l.part === 'projector').map((l) => l.msg)
  t.diagnostic(`projector log lines: ${JSON.stringify(projectorLines)}`)
  assert.equal(projectorLines.filter((m) => /backs off/.test(m)).length, 1)
  assert.equal(projectorLines.filter((m) => /resumed/.test(m)).length, 1)
  assert.ok(projectorLines.length <= 3, `${projectorLines.length} projector lines`)
})

test('Redis full: inbound SMTP answers 451 and takes nothing, then 250 again ' +
  'with its inbound.received event', { timeout: 120_000 }, async () => {
  await addRoute(ob, org, `support@${org.domain}`, false)
  const mail = (subject: string): Promise<unknown> =>
    smtp.sendMail({ from: 'alice@sender.test', to: `support@${org.domain}`, subject, text: 'Hello' })
  assert.equal(await rejectedCode(mail('before')), 250)
  await events.waitFor('inbound.received', 1, 30_000)

  // A transaction that began while Redis had room and reaches DATA once it is full.
  const raw = await RawSmtp.open(ob.proc.inbound!.port)
  assert.match(await raw.command('EHLO client.test'), /^250/)
  assert.match(await raw.command('MAIL FROM:<bob@sender.test>'), /^250/)
  assert.match(await raw.command(`RCPT TO:<support@${org.domain}>`), /^250/)

  await fillRedis(redis)
  let refused = 0
  await eventually(async () => {
    const code = await rejectedCode(mail(`while full ${refused}`))
    assert.ok(code === 250 || code === 451, `code ${code}`)
    if (code === 451) refused++
    return code === 451
  }, '451 while Redis is full', WAIT_MS, EVERY_MS)
  for (let i = 0; i < 3; i++) {
    try {
      await mail('refused')
      assert.fail('accepted while full')
    } catch (err) {
      assert.equal((err as { responseCode?: number }).responseCode, 451)
      assert.match((err as { response?: string }).response ?? '', /^451 4\.3\.1 Mail store is full, try again later$/)
    }
  }

  assert.match(await raw.command('DATA'), /^354/)
  const dataReply = await raw.command(`From: bob@sender.test\r\nTo: support@${org.domain}\r\nSubject: mid-transaction\r\n\r\nHello\r\n.`)
  assert.match(dataReply, /^451 4\.3\.1 Mail store is full, try again later\r\n$/)
  await raw.quit()

  await freeRedis(redis)
  await eventually(async () => (await rejectedCode(mail('after'))) === 250, '250 once Redis has room', WAIT_MS, EVERY_MS)
  const received = await eventually(() => events.of('inbound.received').find((e) => (e.data as { subject?: string }).subject === 'after'),
    'the inbound.received event of the mail accepted after', WAIT_MS, EVERY_MS)
  assert.equal((received.data as { to: string[] }).to[0], `support@${org.domain}`)
  for (const subject of ['refused', 'mid-transaction']) {
    assert.ok(!events.of('inbound.received').some((e) => (e.data as { subject?: string }).subject === subject),
      `${subject}: nothing refused was taken`)
  }
})

test('Redis not answering: readyz 503 with redis unavailable, 200 once it is back', { timeout: 60_000 }, async () => {
  // Stopped, not killed: the connection stays open and nothing answers, as with a hung or unreachable server.
  process.kill(redisServer.pid!, 'SIGSTOP')
  try {
    const down = await ob.request('GET', '/readyz')
    assert.equal(down.status, 503)
    assert.deepEqual(down.body, { status: 'unavailable', checks: { nats: 'ok', redis: 'unavailable', queue: 'ok' } })
  } finally {
    process.kill(redisServer.pid!, 'SIGCONT')
  }
  await eventually(async () => (await ob.request('GET', '/readyz')).status === 200, 'readyz 200', WAIT_MS, EVERY_MS)
})
