import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import { Kvm, type KV } from '@nats-io/kv'
import { NatsCluster } from '../../helpers/nats_cluster.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { publishQueued, queuedMessage } from '../../helpers/engine_env.ts'
import { eventually } from '../../helpers/waiting.ts'
import { ENGINE_CHILD, spawnChild, tcpClientPorts, stopChild, type Child } from '../../helpers/children.ts'
import { KV_BUCKETS, KV_SHARD_LEASES, STREAM_OUTBOUND, type QueuedMessage } from '../../../protocol/mod.ts'
import type { LeaseRecord } from '../../../engine/leases/mod.ts'

/**
 * Three NATS nodes with R3 streams and buckets, three engine processes sharing six shards through leases,
 * a real SMTP sink. Under load one NATS node and one engine are killed with SIGKILL; every message must still
 * arrive, the dead engine's shards must move to the survivors, and the two remaining nodes keep serving.
 */
const SHARDS = 6
const COUNT = 400
const dec = new TextDecoder()

let cluster: NatsCluster
let redis: ServerProcess
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let leases: KV
const engines: Child[] = []

before(async () => {
  cluster = await NatsCluster.start(3)
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start({ keepRaw: false })
  const common = { NATS_URL: cluster.url, OB_NATS_REPLICAS: '3', OB_ENGINE_SHARDS: String(SHARDS) }
  // this process writes the control plane, publishes as the gateway does and reads the lease bucket
  // streams and buckets are created R3 on a cluster that has just formed: a request may time out on a busy machine
  ob = await retrying(async () => await TestOutbox.start({ nats: cluster.nodes[0], redis, env: { ...common, OB_ROLE: 'gateway' } }))
  org = await retrying(async () => await ob.org())
  leases = await retrying(async () => await new Kvm(ob.proc.nc).open(KV_SHARD_LEASES))
  const env = {
    ...common,
    REDIS_URL: redis.url,
    OB_SMTP_RELAY: sink.url,
    OB_SHARD_LEASE_MS: '2000',
    OB_ENGINE_ACK_WAIT_MS: '3000',
    OB_SHUTDOWN_TIMEOUT_MS: '2000'
  }
  // a start-up request that times out on a busy machine makes an engine exit 1, as systemd would restart it
  for (let i = 0; i < 3; i++) engines.push(await retrying(async () => await spawnChild(ENGINE_CHILD, env)))
})
after(async () => {
  await Promise.all(engines.map(async (e) => await stopChild(e, 'SIGKILL')))
  // whatever the set-up got to is taken down, so a failed start reports its own error and nothing is left running
  await ob?.close()
  await sink?.close()
  await redis?.dispose()
  await cluster?.dispose()
})

/** Shard → owner pid (owner ids are `<host>-<pid>-<random>`), read from the lease bucket. */
async function shardOwners (): Promise<Array<number | null>> {
  const out: Array<number | null> = []
  for (let s = 0; s < SHARDS; s++) {
    const e = await leases.get(`outbound.shard.${s}`).catch(() => null)
    const rec = e === null || e.operation !== 'PUT' ? undefined : JSON.parse(dec.decode(e.value)) as LeaseRecord
    out.push(rec === undefined || rec.expires_at < Date.now() ? null : Number(rec.owner.split('-').at(-2)))
  }
  return out
}

async function retrying<T> (fn: () => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn()
    } catch (err) {
      if (i >= attempts) throw err
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  }
}

/** Publishes like a gateway that retries: the same Nats-Msg-Id, so JetStream keeps one copy. */
async function publishWithRetry (m: QueuedMessage): Promise<void> {
  for (;;) {
    try {
      await publishQueued(ob.proc.nc, ob.proc.config, m)
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
}

test('losing a NATS node and an engine under load loses no message; the dead engine\'s shards move', async (t) => {
  const pids = engines.map((e) => e.process.pid!)
  await eventually(async () => {
    const o = await shardOwners()
    return pids.every((p) => o.filter((x) => x === p).length === SHARDS / 3)
  }, 'shards balanced over three engines', 15_000)

  const msgs: QueuedMessage[] = []
  for (let i = 0; i < COUNT; i++) msgs.push(queuedMessage(org, { to: [`r${i}@dest.example`], track_opens: false, track_clicks: false }))
  const publishing = (async () => {
    for (let i = 0; i < msgs.length; i += 20) await Promise.all(msgs.slice(i, i + 20).map(publishWithRetry))
  })()

  const victim = engines[0]!
  // every connection each engine opens to the sink, so that a message can be told apart by the engine that sent it
  const portOwner = new Map<number, number>()
  let killed = false
  const notePorts = (): void => {
    for (const e of engines) {
      if (killed && e === victim) continue
      try {
        for (const p of tcpClientPorts(e.process.pid!, sink.port)) if (!portOwner.has(p)) portOwner.set(p, e.process.pid!)
      } catch { /* the process is gone */ }
    }
  }
  const noting = setInterval(notePorts, 20)
  t.after(() => { clearInterval(noting) })
  await sink.until(() => sink.accepted >= COUNT / 5, 30_000)
  notePorts()
  const victimSessions = tcpClientPorts(victim.process.pid!, sink.port)
  killed = true
  await Promise.all([cluster.nodes[2]!.stop('SIGKILL'), stopChild(victim, 'SIGKILL')])
  const killedAt = Date.now()
  t.diagnostic(`killed NATS node n3 and engine ${victim.process.pid!} after ${sink.accepted} accepted`)

  // the sink records the transactions whose data it had, until the killed engine's sessions close there
  await eventually(() => victimSessions.every((p) => !sink.openSessions.has(p)), 'the killed engine\'s SMTP sessions to close at the sink')
  const acceptedByThen = new Set(sink.messages.map((m) => m.messageId))
  await publishing
  const ids = new Set(msgs.map((m) => `<${m.id}@${org.domain}>`))
  const arrived = new Set<string>()
  await eventually(() => {
    for (const m of sink.messages) arrived.add(m.messageId)
    return [...ids].every((id) => arrived.has(id))
  }, 'every message reached the sink', 40_000)
  t.diagnostic(`all ${COUNT} delivered ${Date.now() - killedAt} ms after the kills; ` +
    `sink accepted ${sink.messages.length} (duplicates ${sink.messages.length - arrived.size})`)

  // The only duplicates are messages the killed engine had in an SMTP transaction: one of the copies came on one of
  // its connections. (Whether the sink had recorded that copy by the time the victim's sessions closed there depends
  // on how soon the sink read what the kernel still held; it is reported, not asserted.)
  clearInterval(noting)
  const copies = new Map<string, Array<{ port: number, at: number }>>()
  for (const m of sink.messages) {
    copies.set(m.messageId, [...(copies.get(m.messageId) ?? []), { port: m.remotePort, at: m.receivedAt - killedAt }])
  }
  const repeated = [...copies].filter(([, sent]) => sent.length > 1)
  t.diagnostic('duplicates recorded by the time the killed engine\'s sessions closed: ' +
    `${repeated.filter(([id]) => acceptedByThen.has(id)).length} of ${repeated.length}`)
  const victimPid = victim.process.pid!
  for (const [id, sent] of repeated) {
    const told = sent.map((c) => `port ${c.port} of engine ${portOwner.get(c.port) ?? '?'} at ${c.at} ms from the kills`).join('; ')
    assert.ok(sent.some((c) => portOwner.get(c.port) === victimPid),
      `${id} was sent ${sent.length} times, none of them by the killed engine ${victimPid} (${told})`)
  }

  const survivors = pids.slice(1)
  // while a survivor's presence key was out of reach, the other may briefly hold everything; then they rebalance
  await eventually(async () => {
    const o = await shardOwners()
    return survivors.every((p) => o.filter((x) => x === p).length === SHARDS / 2)
  }, 'the survivors share every shard', 20_000)
  const owners = await shardOwners()
  assert.ok(!owners.includes(victim.process.pid!), 'no shard is leased to the dead engine')
  for (const p of survivors) assert.equal(owners.filter((x) => x === p).length, SHARDS / 2, `engine ${p} holds its share`)

  // the JetStream API can time out while the cluster is still electing leaders after the kill
  const jsm = await retrying(async () => await jetstreamManager(ob.proc.nc), 6)
  for (const stream of [STREAM_OUTBOUND, `KV_${KV_SHARD_LEASES}`, `KV_${KV_BUCKETS.apiKeys}`]) {
    assert.equal((await retrying(async () => await jsm.streams.info(stream), 6)).config.num_replicas, 3,
      `${stream} has OB_NATS_REPLICAS replicas`)
  }
  const info = await retrying(async () => await jsm.streams.info(STREAM_OUTBOUND), 6)
  assert.ok(info.cluster?.leader !== undefined && info.cluster.leader !== 'n3',
    `the stream has a leader on a live node (${String(info.cluster?.leader)})`)
})
