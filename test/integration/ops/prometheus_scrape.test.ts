import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createTransport } from 'nodemailer'
import { Agent, fetch } from 'undici'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { spawnCli } from '../../helpers/cli.ts'
import { freePort, waitForPort } from '../../helpers/ports.ts'
import { dsn } from '../../helpers/reports.ts'
import { addRoute } from '../../helpers/inbound.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * A real Prometheus scrapes a gateway, an engine and an inbound process (three `outbox start` processes with
 * OB_ROLE gateway / engine / inbound) every second, with the alert rules of ops/prometheus/alerts.yml loaded.
 * Mail sent through the HTTP API to an SMTP sink, and a forged report sent to the inbound server, are read
 * back as figures through Prometheus' query API: what an operator's dashboard would show.
 */
const ALERTS = fileURLToPath(new URL('../../../../ops/prometheus/alerts.yml', import.meta.url))
const hasPrometheus = spawnSync('prometheus', ['--version']).status === 0
const agent = new Agent({ keepAliveTimeout: 1000 })

let nats: ServerProcess | undefined
let redis: ServerProcess | undefined
let sink: SmtpSink | undefined
let admin: TestOutbox | undefined
let org: TestOrg
let dir: string | undefined
const children: ChildProcess[] = []
const ports = { http: 0, engine: 0, inbound: 0, inboundSmtp: 0, prometheus: 0 }

async function promQuery (expr: string): Promise<Array<{ metric: Record<string, string>, value: number }>> {
  const res = await fetch(`http://127.0.0.1:${ports.prometheus}/api/v1/query?query=${encodeURIComponent(expr)}`, { dispatcher: agent })
  const body = await res.json() as { status: string, data: { result: Array<{ metric: Record<string, string>, value: [number, string] }> } }
  assert.equal(body.status, 'success', expr)
  return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }))
}

/** The single value of a query once it reaches `min` (Prometheus sees a change one scrape later). */
async function figure (expr: string, min: number, timeoutMs = 30_000): Promise<number> {
  let last: number | undefined
  await eventually(async () => {
    const r = await promQuery(expr)
    last = r.length === 1 ? r[0]!.value : undefined
    return last !== undefined && last >= min
  }, `${expr} >= ${min} (last ${String(last)})`, timeoutMs)
  return last!
}

function startRole (role: string, env: Record<string, string>): void {
  const run = spawnCli(['start'], {
    NATS_URL: nats!.url, REDIS_URL: redis!.url, OB_DOMAIN_VERIFICATION: 'off', OB_SHUTDOWN_TIMEOUT_MS: '2000', OB_ROLE: role, ...env
  })
  children.push(run.child)
}

before(async () => {
  if (!hasPrometheus) return
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start({ keepRaw: false })
  admin = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway' } })
  org = await admin.org('pro')
  for (const k of Object.keys(ports) as Array<keyof typeof ports>) ports[k] = await freePort()
  startRole('gateway', { OB_HTTP_PORT: String(ports.http), OB_SMTP_INBOUND_PORT: '0' })
  startRole('engine', { OB_HTTP_PORT: '0', OB_METRICS_PORT: String(ports.engine), OB_SMTP_RELAY: sink.url })
  startRole('inbound', { OB_HTTP_PORT: '0', OB_METRICS_PORT: String(ports.inbound), OB_SMTP_INBOUND_PORT: String(ports.inboundSmtp) })
  await Promise.all([waitForPort(ports.http, 30_000), waitForPort(ports.engine, 30_000), waitForPort(ports.inbound, 30_000)])

  dir = mkdtempSync(join(tmpdir(), 'outbox-prometheus-'))
  const job = (name: string, port: number): string => `  - job_name: ${name}\n    static_configs:\n      - targets: ['127.0.0.1:${port}']\n`
  writeFileSync(join(dir, 'prometheus.yml'), [
    'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n',
    `rule_files:\n  - ${ALERTS}\n`,
    'scrape_configs:\n',
    job('outbox-gateway', ports.http), job('outbox-engine', ports.engine), job('outbox-inbound', ports.inbound)
  ].join(''))
  const prom = spawn('prometheus', [
    `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${ports.prometheus}`, '--log.level=warn'
  ], { stdio: ['ignore', 'ignore', 'inherit'] })
  children.push(prom)
  await eventually(async () => (await fetch(`http://127.0.0.1:${ports.prometheus}/-/ready`, { dispatcher: agent }).catch(() => undefined))?.status === 200,
    'prometheus ready', 30_000)
})

after(async () => {
  if (!hasPrometheus) return
  await Promise.all(children.map(async (c) => {
    if (c.exitCode !== null || c.signalCode !== null) return
    await new Promise<void>((resolve) => { c.once('exit', () => resolve()); c.kill('SIGTERM') })
  }))
  await agent.close().catch(() => {})
  // each part may be missing when starting the servers failed part-way
  await admin?.close()
  await sink?.close()
  await nats?.dispose()
  await redis?.dispose()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

async function send (to: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${ports.http}/v1/messages/send`, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${org.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from: `app@${org.domain}`, to, subject: 'metrics', text: 'hello', track_opens: false, track_clicks: false })
  })
  assert.equal(res.status, 202, await res.text())
}

test('Prometheus scrapes every role and reads back what the mail did', {
  skip: hasPrometheus ? false : 'prometheus is not installed (apt-get install -y prometheus)'
}, async () => {
  // every process is a target that answers
  await eventually(async () => (await promQuery('up{job=~"outbox-.*"} == 1')).length === 3, 'three targets up', 30_000)
  const roles = await promQuery('outbox_role == 1')
  assert.deepEqual(roles.map((r) => `${r.metric.job} ${r.metric.role}`).sort(),
    ['outbox-engine engine', 'outbox-gateway gateway', 'outbox-inbound inbound'])

  for (let i = 0; i < 5; i++) await send(`user${i}@dest.test`)
  await send('permfail-1@dest.test')
  await send('policy-1@dest.test')

  assert.equal(await figure('sum(outbox_messages_queued_total{job="outbox-gateway"})', 7), 7)
  assert.equal(await figure('sum(outbox_rate_limit_decisions_total{job="outbox-gateway", scope="api_key", decision="allowed"})', 7), 7)
  assert.equal(await figure('sum(outbox_delivery_outcomes_total{job="outbox-engine", environment="live", outcome="delivered"})', 5), 5)
  assert.equal(await figure('sum(outbox_delivery_outcomes_total{job="outbox-engine", environment="live", outcome="bounced"})', 2), 2)
  assert.equal(await figure('sum(outbox_bounces_total{type="hard", category="mailbox"})', 1), 1)
  assert.equal(await figure('sum(outbox_bounces_total{type="hard", category="policy"})', 1), 1)
  // only the mailbox bounce suppresses (docs/delivery.md)
  assert.equal(await figure('sum(outbox_suppressions_added_total{reason="hard_bounce"})', 1), 1)
  // every SMTP transaction went to the relay and was timed in the shard thread, counted in the main thread
  assert.equal(await figure('sum(outbox_smtp_attempt_duration_seconds_count{destination="relay"})', 7), 7)
  assert.equal(await figure('sum(outbox_smtp_attempt_duration_seconds_count{destination="relay", result="delivered"})', 5), 5)
  // the engine holds every shard (4 by default), and nothing is left pending once the mail is out
  assert.equal(await figure('sum(outbox_shard_owned{job="outbox-engine"})', 4), 4)
  await eventually(async () => (await promQuery('sum(outbox_jetstream_consumer_pending{stream="OB_OUTBOUND"}) == 0')).length === 1,
    'outbound consumers drained', 30_000)
  const consumers = await promQuery('outbox_jetstream_consumer_pending')
  assert.ok(consumers.some((c) => c.metric.job === 'outbox-inbound' && c.metric.consumer === 'inbound'),
    'the inbound process reports its consumer')
  assert.ok(consumers.some((c) => c.metric.job === 'outbox-engine' && c.metric.consumer === 'ob_webhooks'),
    'the engine reports the fan-out consumer')

  // a report through a route that names a message that is not ours is dropped and counted by the inbound process
  await addRoute(admin!, org, `*@${org.domain}`, false)
  const smtp = createTransport({ host: '127.0.0.1', port: ports.inboundSmtp, secure: false, ignoreTLS: true, pool: false })
  const to = `reports@${org.domain}`
  await eventually(async () => {
    try {
      await smtp.sendMail({
        envelope: { from: '', to: [to] },
        raw: dsn({
          to, recipient: 'someone@elsewhere.test', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 no such user',
          originalId: '<forged@elsewhere.test>', domain: org.domain
        })
      })
      return true
    } catch { return false } // the route reaches the inbound process through its watch
  }, 'the route is known to the inbound server')
  smtp.close()
  assert.equal(await figure('sum(outbox_inbound_reports_dropped_total{job="outbox-inbound", reason="not_our_message"})', 1), 1)

  // process metrics of every role, event-loop lag among them
  assert.equal((await promQuery('nodejs_eventloop_lag_p99_seconds{job=~"outbox-.*"}')).length, 3)
  assert.equal((await promQuery('process_resident_memory_bytes{job=~"outbox-.*"}')).length, 3)
  assert.equal((await promQuery('outbox_nats_connected == 1')).length, 3)
  assert.equal((await promQuery('outbox_redis_connected == 1')).length, 3)
  // the alert rules loaded and none of the availability alerts fires on a healthy deployment
  const rules = await (await fetch(`http://127.0.0.1:${ports.prometheus}/api/v1/rules`, { dispatcher: agent })).json() as { data: { groups: Array<{ rules: Array<{ name: string, state: string, health: string }> }> } }
  const all = rules.data.groups.flatMap((g) => g.rules)
  assert.ok(all.length >= 10, 'alert rules loaded')
  assert.deepEqual(all.filter((r) => r.health === 'err').map((r) => r.name), [], 'every rule evaluates')
  assert.deepEqual(all.filter((r) => r.state === 'firing').map((r) => r.name), [], 'nothing fires')
})
