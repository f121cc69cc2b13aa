import { writeFileSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { availableParallelism } from 'node:os'
import { loadConfig } from '../config/mod.ts'
import { connectNats, ensureStreams } from '../stores/clients/mod.ts'
import { streamSettings } from '../protocol/mod.ts'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { openLeaseBucket, type LeaseRecord } from '../engine/leases/mod.ts'
import { createOrganization } from '../gateway/control/orgs.ts'
import { ServerProcess } from '../test/helpers/servers.ts'
import { NatsCluster } from '../test/helpers/nats_cluster.ts'
import { ENGINE_CHILD, spawnChild, stopChild, type Child } from '../test/helpers/children.ts'
import { publishQueued, queuedMessage } from '../test/helpers/engine_env.ts'
import { RemoteSink } from './engine.ts'
import { cpuSnapshot } from './proc_cpu.ts'
import type { BenchOptions, BenchResult } from './types.ts'

/**
 * Accepted and delivered messages per second with 1, 2 and 3 engine processes sharing the shards through
 * leases, on a loopback three-node NATS cluster with R3 streams (quick mode: one NATS node, R1), one Redis and
 * an SMTP sink in its own process. "Accepted" is the rate at which this process publishes QueuedMessages to
 * OB_OUTBOUND exactly as a gateway does after validation (acknowledged by JetStream); the HTTP part of the
 * gateway is measured by the ratelimit benchmark. CPU per message is read from /proc for every engine, NATS and
 * Redis process, and from process.cpuUsage() for the publisher. All processes share this machine's cores, so
 * more engines only help while cores are idle: on two cores the curve flattens, and the table says so.
 *
 *   node dist/bench/scale.js [--quick]     → bench/results/scale.json (quick: bench/results/quick/scale.json)
 */
const SHARDS = 12
const PADDING = '<p>Thank you for your order, this pads the message to a realistic size.</p>'
const HTML = `<html><body><h1>Your receipt</h1>${PADDING.repeat(20)}</body></html>`

interface Row {
  engines: number
  messages: number
  accepted_per_s: number
  delivered_per_s: number
  cpu_us_per_msg: { publisher: number, engines: number, nats: number, redis: number, total: number }
}

async function waitBalanced (leases: Awaited<ReturnType<typeof openLeaseBucket>>, engines: number): Promise<void> {
  const deadline = Date.now() + 30_000
  const dec = new TextDecoder()
  for (;;) {
    const owners = new Map<string, number>()
    for (let s = 0; s < SHARDS; s++) {
      const e = await leases.kv.get(`outbound.shard.${s}`).catch(() => null)
      if (e === null || e.operation !== 'PUT') continue
      const o = (JSON.parse(dec.decode(e.value)) as LeaseRecord).owner
      owners.set(o, (owners.get(o) ?? 0) + 1)
    }
    const counts = [...owners.values()]
    if (counts.length === engines && counts.every((c) => c === SHARDS / engines)) return
    if (Date.now() > deadline) throw new Error(`shards not balanced over ${engines} engines: ${JSON.stringify([...owners])}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

export async function runScaleBench (opts: Pick<BenchOptions, 'quick'> & Partial<BenchOptions>): Promise<BenchResult> {
  const t0 = Date.now()
  const progress = opts.progress ?? (() => {})
  const quick = opts.quick
  const messages = quick ? 300 : 4000
  const cluster = quick ? undefined : await NatsCluster.start(3, 'obbench')
  const single = quick ? await ServerProcess.nats() : undefined
  const natsPids = cluster !== undefined ? cluster.nodes.map((n) => n.pid) : [single!.pid]
  const natsUrl = cluster?.url ?? single!.url
  const replicas = cluster !== undefined ? '3' : '1'
  const redis = await ServerProcess.redis()
  const sink = await RemoteSink.start()
  const rows: Row[] = []
  const failures: string[] = []
  try {
    const env = {
      NATS_URL: natsUrl,
      REDIS_URL: redis.url,
      OB_NATS_REPLICAS: replicas,
      OB_ENGINE_SHARDS: String(SHARDS),
      OB_SMTP_RELAY: sink.url,
      OB_SHARD_LEASE_MS: '3000',
      OB_SHUTDOWN_TIMEOUT_MS: '5000'
    }
    const config = loadConfig(env)
    const nc = await connectNats(config.nats.servers, 'bench-scale')
    await ensureStreams(nc, streamSettings(config))
    const cp = await ControlPlane.open(nc, { replicas: config.nats.replicas })
    const made = await createOrganization(cp, config, { name: 'scale', domain: 'scale.example', plan: 'enterprise' })
    const org = { orgId: made.organization_id, domainId: made.domain_id, domain: 'scale.example', adminKey: made.api_key }
    const leases = await openLeaseBucket(nc, config.nats.replicas)
    for (const k of [1, 2, 3]) {
      progress((k - 1) / 3, `${k} engine(s)`)
      const engines: Child[] = []
      for (let i = 0; i < k; i++) engines.push(await spawnChild(ENGINE_CHILD, env))
      await waitBalanced(leases, k)
      const base = await sink.accepted()
      const engineCpu = cpuSnapshot(engines.map((e) => e.process.pid))
      const natsCpu = cpuSnapshot(natsPids)
      const redisCpu = cpuSnapshot([redis.pid])
      const pubCpu0 = process.cpuUsage()
      const start = Date.now()
      const inFlight: Array<Promise<void>> = []
      for (let i = 0; i < messages; i++) {
        const message = queuedMessage(org, {
          to: [`s${k}x${i}@dest.example`],
          subject: 'Your receipt',
          html: HTML,
          text: 'Thank you for your order.',
          track_opens: false,
          track_clicks: false
        })
        inFlight.push(publishQueued(nc, config, message))
        if (inFlight.length >= 200) await Promise.all(inFlight.splice(0))
      }
      await Promise.all(inFlight)
      const publishedS = (Date.now() - start) / 1000
      const pubCpu = process.cpuUsage(pubCpu0)
      await sink.until(base + messages)
      const deliveredS = (Date.now() - start) / 1000
      const per = (us: number): number => Math.round(us / messages)
      const cpu = {
        publisher: per(pubCpu.user + pubCpu.system), engines: per(engineCpu()), nats: per(natsCpu()), redis: per(redisCpu()), total: 0
      }
      cpu.total = cpu.publisher + cpu.engines + cpu.nats + cpu.redis
      rows.push({
        engines: k,
        messages,
        accepted_per_s: Math.round(messages / publishedS),
        delivered_per_s: Math.round(messages / deliveredS),
        cpu_us_per_msg: cpu
      })
      await Promise.all(engines.map(async (e) => await stopChild(e, 'SIGTERM')))
    }
    cp.close()
    await nc.drain()
  } catch (err) {
    failures.push(String((err as Error).stack ?? err))
  } finally {
    await sink.close()
    await redis.dispose()
    await cluster?.dispose()
    await single?.dispose()
  }
  const cores = availableParallelism()
  const gain = rows.length === 3 ? Math.round((rows[2]!.delivered_per_s / rows[0]!.delivered_per_s) * 100) / 100 : 0
  const setup = cluster !== undefined ? '3-node NATS cluster, R3' : 'single NATS, R1'
  const delivered = rows.map((r) => `${r.delivered_per_s}/s with ${r.engines}`).join(', ')
  return {
    name: 'scale',
    title: 'Engine scale-out: 1, 2 and 3 engine processes sharing the shards',
    quick,
    passed: failures.length === 0 && rows.length === 3,
    summary: rows.length === 3
      ? `${setup}: delivered ${delivered} engine(s) on ${cores} cores (×${gain} from 1 to 3)`
      : 'did not complete',
    tables: [{
      title: 'Accepted and delivered messages per second, CPU µs per message by process kind',
      columns: [
        'engines', 'messages', 'accepted/s', 'delivered/s',
        'publisher µs/msg', 'engines µs/msg', 'NATS µs/msg', 'Redis µs/msg', 'total µs/msg'
      ],
      rows: rows.map((r) => [
        r.engines, r.messages, r.accepted_per_s, r.delivered_per_s,
        r.cpu_us_per_msg.publisher, r.cpu_us_per_msg.engines, r.cpu_us_per_msg.nats, r.cpu_us_per_msg.redis, r.cpu_us_per_msg.total
      ])
    }],
    charts: [{
      title: 'Delivered messages per second by engine processes',
      kind: 'bar',
      xLabel: 'engine processes',
      yLabel: 'msgs/s',
      x: rows.map((r) => r.engines),
      series: [{ name: 'delivered/s', values: rows.map((r) => r.delivered_per_s) }]
    }],
    notes: [
      `Every process (publisher, engines, ${natsPids.length} NATS node(s), Redis, SMTP sink) runs on the same ${cores} cores: ` +
        'extra engines add throughput only while cores are idle. On separate machines the per-message CPU figures, not this curve, ' +
        'predict capacity (docs/scaling.md).',
      '"Accepted" is the JetStream publish rate of QueuedMessages as the gateway publishes them, without HTTP; the HTTP gateway cost ' +
        'is in the ratelimit benchmark.',
      `${SHARDS} shards; the run starts once the shard leases are balanced over the engines.`
    ],
    failures,
    duration_s: Math.round((Date.now() - t0) / 100) / 10
  }
}

function markdown (r: BenchResult): string {
  const t = r.tables[0]!
  return [
    `| ${t.columns.join(' | ')} |`,
    `|${t.columns.map(() => '---:').join('|')}|`,
    ...t.rows.map((row) => `| ${row.join(' | ')} |`),
    '',
    ...r.notes.map((n) => `- ${n}`)
  ].join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes('--quick')
  const result = await runScaleBench({ quick })
  const out = new URL(`../../bench/results/${quick ? 'quick/' : ''}scale.json`, import.meta.url)
  mkdirSync(new URL('.', out), { recursive: true })
  writeFileSync(out, JSON.stringify({ ...result, finished_at: new Date().toISOString() }, null, 2) + '\n')
  process.stdout.write(`${result.summary}\n\n${markdown(result)}\n`)
  for (const f of result.failures) process.stderr.write(`${f}\n`)
  process.exit(result.passed ? 0 : 1)
}
