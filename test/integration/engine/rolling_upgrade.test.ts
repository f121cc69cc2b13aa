import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import { Kvm } from '@nats-io/kv'
import { Agent, fetch } from 'undici'
import { KV_SHARD_LEASES, STREAM_OUTBOUND, shardOf } from '../../../protocol/mod.ts'
import { ENGINE_CHILD, spawnChild, stopChild, type Child } from '../../helpers/children.ts'
import { EventWatcher } from '../../helpers/engine_env.ts'
import { newerBuild, type NewerBuild } from '../../helpers/newer_build.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { freePort } from '../../helpers/ports.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * A rolling upgrade, gateway first: the next release's gateway (a copy of this build whose queued-message format
 * is one higher, writing a field this build does not know) sends while an engine of this build and one of the next
 * release share the shards. The old engine hands the newer messages back, counted; the newer engine delivers its
 * own shards' messages at once, and the old engine's once it is upgraded (stopped, its shards taken over). Every
 * message reaches the sink exactly once with one `delivered` event; none is deferred or failed.
 */
const SHARDS = 4
const FIELD = { name: 'upgrade_probe', value: 'written by the next release' }
const dec = new TextDecoder()
const agent = new Agent({ keepAliveTimeout: 1000 })

let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let admin: TestOutbox
let org: TestOrg
let events: EventWatcher
let next: NewerBuild
let oldEngine: Child
let newEngine: Child
let newGateway: Child
let oldMetricsPort: number
let newMetricsPort: number

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start()
  // today's gateway, in this process: it writes the organisation, and sends as a not yet upgraded gateway does
  admin = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway', OB_ENGINE_SHARDS: String(SHARDS) } })
  org = await admin.org()
  next = newerBuild(FIELD)
  ;[oldMetricsPort, newMetricsPort] = [await freePort(), await freePort()]
  const env = {
    NATS_URL: nats.url,
    REDIS_URL: redis.url,
    OB_DOMAIN_VERIFICATION: 'off',
    OB_SMTP_INBOUND_PORT: '0',
    OB_SHUTDOWN_TIMEOUT_MS: '2000',
    OB_SMTP_RELAY: sink.url,
    OB_ENGINE_SHARDS: String(SHARDS),
    OB_SHARD_LEASE_MS: '3000',
    // a hand-back the server sent to the stopping engine's last pull comes back after ack_wait (the window in which
    // any message in flight at a lease's move waits, docs/scaling.md); short here so the test need not wait a minute
    OB_ENGINE_ACK_WAIT_MS: '3000',
    // the first retry step is also how long an engine hands a newer message back for
    OB_DELIVERY_RETRY_SCHEDULE: '1'
  }
  oldEngine = await spawnChild(ENGINE_CHILD, { ...env, OB_METRICS_PORT: String(oldMetricsPort) })
  newEngine = await spawnChild(next.engineChild, { ...env, OB_METRICS_PORT: String(newMetricsPort) })
  newGateway = await spawnChild(next.gatewayChild, env)
  events = await EventWatcher.start(admin.proc.nc, org.orgId)
})
after(async () => {
  events?.stop()
  await Promise.all([oldEngine, newEngine, newGateway].filter((c) => c !== undefined).map(async (c) => await stopChild(c)))
  await agent.close().catch(() => {})
  await admin?.close()
  await sink?.close()
  next?.dispose()
  await nats?.dispose()
  await redis?.dispose()
})

async function newerFormatHandedBack (port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { dispatcher: agent })).text()
  const m = /^outbox_outbound_newer_format_total (\d+)$/m.exec(text)
  assert.ok(m !== null, 'the engine serves outbox_outbound_newer_format_total')
  return Number(m[1])
}

/** The shards each engine holds, once each holds half of them. */
async function shardsOf (pid: number): Promise<number[]> {
  const kv = await new Kvm(admin.proc.nc).open(KV_SHARD_LEASES)
  const owners = await eventually(async () => {
    const o: string[] = []
    for (let s = 0; s < SHARDS; s++) {
      const e = await kv.get(`outbound.shard.${s}`)
      if (e === null || e.operation !== 'PUT') return undefined
      o.push((JSON.parse(dec.decode(e.value)) as { owner: string }).owner)
    }
    const mine = o.filter((x) => x.includes(`-${pid}-`)).length
    return new Set(o).size === 2 && mine === SHARDS / 2 ? o : undefined
  }, 'the two engines to hold two shards each')
  return owners.flatMap((o, s) => o.includes(`-${pid}-`) ? [s] : [])
}

async function sendThrough (baseUrl: string, to: string): Promise<string> {
  const res = await fetch(`${baseUrl}/v1/messages/send`, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${org.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      from: `App <hello@${org.domain}>`, to, subject: 'Upgrade', text: 'hello', track_opens: false, track_clicks: false
    })
  })
  const body = await res.json() as { id: string }
  assert.equal(res.status, 202, JSON.stringify(body))
  return body.id
}

test('during a rolling upgrade the old engine hands the next release\'s messages back and the newer engine delivers ' +
  'every one exactly once; nothing is deferred, failed or lost', async () => {
  const oldShards = await shardsOf(oldEngine.process.pid!)
  const newer: string[] = []
  for (let i = 0; i < 16; i++) newer.push(await sendThrough(`http://127.0.0.1:${newGateway.port!}`, `next${i}@dest.example`))
  const today: string[] = []
  for (let i = 0; i < 4; i++) today.push(await sendThrough(admin.baseUrl, `today${i}@dest.example`))
  const waiting = newer.filter((id) => oldShards.includes(shardOf(id, SHARDS)))
  assert.ok(waiting.length > 0 && waiting.length < newer.length, `messages on both engines' shards (${waiting.length} of ${newer.length})`)

  const delivered = (id: string): number => sink.messages.filter((m) => m.messageId === `<${id}@${org.domain}>`).length
  // the newer engine delivers its shards' messages; the old one delivers today's format on its shards and hands
  // back every newer message at least once
  await eventually(async () => newer.concat(today).every((id) => waiting.includes(id) || delivered(id) === 1) &&
    await newerFormatHandedBack(oldMetricsPort) >= waiting.length, 'the newer engine\'s deliveries and the old engine\'s hand-backs')
  assert.deepEqual(waiting.filter((id) => delivered(id) > 0), [], 'the old engine sent none of the newer messages')
  assert.equal(await newerFormatHandedBack(newMetricsPort), 0, 'the newer engine reads every message')

  // What waits is the next release's message as its gateway wrote it: the higher format and the unknown field
  // (the others leave the work queue as they are acknowledged, just after their delivery).
  const jsm = await jetstreamManager(admin.proc.nc)
  const stored = await eventually(async () => {
    const info = await jsm.streams.info(STREAM_OUTBOUND)
    const out: Array<Record<string, unknown>> = []
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(STREAM_OUTBOUND, { seq }).catch(() => null)
      if (m !== null) out.push(m.json<Record<string, unknown>>())
    }
    return out.length === waiting.length ? out : undefined
  }, 'only the waiting messages left in the outbound stream')
  assert.deepEqual(stored.map((m) => m.id).sort(), [...waiting].sort())
  for (const m of stored) {
    assert.equal(m.v, next.format)
    assert.equal(m[FIELD.name], FIELD.value)
  }

  // The old engine is upgraded: it stops, the newer engine takes its shards and delivers what waited.
  await stopChild(oldEngine)
  await eventually(() => waiting.every((id) => delivered(id) === 1), 'the waiting messages delivered by the newer engine', 30_000)
  const all = newer.concat(today)
  await events.until(() => all.every((id) => events.of(id, 'delivered').length === 1))
  for (const id of all) {
    assert.equal(delivered(id), 1, `${id} reached the sink once`)
    assert.deepEqual(events.of(id).map((e) => e.type), ['delivered'], `${id}: delivered, never deferred or failed`)
  }
  // every message is acknowledged: the work queue is empty
  await eventually(async () => (await jsm.streams.info(STREAM_OUTBOUND)).state.messages === 0, 'an empty outbound stream')
})
