import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'
import { DEFAULT_LIMITS } from '../../../protocol/egress/mod.ts'
import { runCli } from '../../helpers/cli.ts'
import { eventually } from '../../helpers/waiting.ts'

// What operators see of egress as it runs (GET /v1/operator/egress/lanes): after mail from a warming source to
// Google, its lane with Google's limits, the warm-up day and what was sent against today's allowance, nothing waiting;
// an organisation's admin key does not reach it.
let sink: SmtpSink
let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher
let operatorKey: string

before(async () => {
  sink = await SmtpSink.start({ keepRaw: false })
  dns = await DnsServer.start({
    MX: { 'lanes.test': [{ exchange: 'aspmx.l.google.com', priority: 1 }] },
    A: { 'aspmx.l.google.com': ['127.0.0.1'] }
  })
  ob = await TestOutbox.start({
    env: { OB_DNS_SERVERS: dns.address, OB_SMTP_OUTBOUND_PORT: String(sink.port), OB_SMTP_ALLOW_PRIVATE: 'true' }
  })
  org = await ob.org()
  operatorKey = (await ob.proc.cp.operatorKeys.create('lanes')).value
  await ob.proc.cp.egress.addSource({ name: 'fresh', address: '127.0.0.4', ehlo: 'fresh.outbox.test', warmup: {} })
  await ob.proc.cp.egress.putPool('warming', [{ source: 'fresh', weight: 100 }])
  await ob.proc.cp.egress.assignOrg(org.orgId, 'warming')
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await sink.close()
  await dns.close()
})

test('a lane shows its limits, its throttle, what waits for it and the warm-up progress of its source', async () => {
  const msgs = Array.from({ length: 5 }, (_v, i) => queuedMessage(org, { to: [`user${i}@lanes.test`] }))
  for (const m of msgs) await publishQueued(ob.proc.nc, ob.proc.config, m)
  await events.until(() => msgs.every((m) => events.of(m.id, 'delivered').length === 1))
  const r = await ob.request('GET', '/v1/operator/egress/lanes', { key: operatorKey })
  assert.equal(r.status, 200)
  const lanes = (r.body as { data: Array<Record<string, any>> }).data
  const lane = lanes.find((l) => l.lane === 'fresh|google')
  assert.ok(lane !== undefined, `lanes: ${JSON.stringify(lanes)}`)
  assert.deepEqual(lane.limits, DEFAULT_LIMITS.google)
  assert.equal(lane.messages_per_minute_now, DEFAULT_LIMITS.google!.messagesPerMinute)
  assert.deepEqual(lane.throttle, { factor: 1, paused_until: null, out_until: null, reason: null, changed_at: null })
  assert.deepEqual(lane.waiting, { messages: 0, oldest_seconds: null })
  assert.equal(lane.warmup.day, 1)
  assert.equal(lane.warmup.sent_today, 5)
  assert.equal(lane.warmup.sent_this_hour, 5)
  assert.ok(lane.warmup.per_day >= 5 && lane.warmup.per_hour >= 5)
  assert.ok(lane.connections <= DEFAULT_LIMITS.google!.maxConnections)
  // the CLI reads the same lanes from the same Redis
  const cli = await runCli(['egress', 'lanes'], { NATS_URL: ob.nats.url, REDIS_URL: ob.redisServer.url })
  assert.equal(cli.code, 0, cli.stderr)
  // the same lanes; connections change as idle ones close, so they are left out of the comparison
  const steady = (l: Record<string, unknown>): Record<string, unknown> => ({ ...l, connections: undefined })
  assert.deepEqual((JSON.parse(cli.stdout) as { data: Array<Record<string, unknown>> }).data.map(steady), lanes.map(steady))
  const refused = await ob.request('GET', '/v1/operator/egress/lanes', { key: org.adminKey })
  assert.equal(refused.status, 403)
  assert.equal((refused.body as { error: { code: string } }).error.code, 'forbidden')
})

test('/metrics shows the lanes of known providers, read from Redis every 15 s', async () => {
  const scrape = async (): Promise<string> => (await ob.request('GET', '/metrics')).text
  await eventually(async () => (await scrape()).includes('outbox_egress_warmup_sent_today{source="fresh",provider="google"} 5'),
    'the warm-up count on /metrics', 25_000)
  const text = await scrape()
  assert.match(text, /outbox_egress_lane_rate_factor\{source="fresh",provider="google"\} 1\n/)
  assert.match(text, /outbox_egress_lane_waiting\{source="fresh",provider="google"\} 0\n/)
  assert.match(text, /outbox_egress_lane_messages_per_minute\{source="fresh",provider="google"\} \d+\n/)
})
