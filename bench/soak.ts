import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ChildProcess } from 'node:child_process'
import { connect } from '@nats-io/transport-node'
import { loadConfig } from '../config/mod.ts'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { ensureStreams } from '../stores/clients/mod.ts'
import { newId, randomToken, streamSettings } from '../protocol/mod.ts'
import { createOrganization, buildApiKey } from '../gateway/control/orgs.ts'
import { ServerProcess } from '../test/helpers/servers.ts'
import { SmtpSink } from '../test/helpers/smtp_sink.ts'
import { HttpsReceiver, testCa } from '../test/helpers/https_receiver.ts'
import { DnsServer } from '../test/helpers/dns_server.ts'
import { spawnCli } from '../test/helpers/cli.ts'
import { freePort } from '../test/helpers/ports.ts'
import { pendingState, send, sendBody, sleep, type PendingState } from '../test/integration/faults/fault_env.ts'
import { renderChart } from './svg_chart.ts'
import { parseBenchArgs } from './args.ts'
import { LatencyWindow, processUsage, type SoakSample } from './soak_probe.ts'
import { measurePoisonImpact, type PoisonImpact } from './soak_poison.ts'
import { drain, leftovers, type Received, type SoakTallies } from './soak_checks.ts'
import { soakReport } from './soak_report.ts'
import { checkWaitingMail, startWaitingMail } from './soak_waiting.ts'
import { WebhookReplacer } from './soak_webhooks.ts'
import { SoakServers, type JetStreamFullMode } from './soak_store_faults.ts'
import { KillAccounting } from './soak_duplicates.ts'
import { stuckWebhookJobs } from './soak_jobs.ts'
import { startInbound } from './soak_inbound.ts'
import type { BenchOptions, BenchResult } from './types.ts'

/**
 * Soak: mixed load (sends, reads, webhooks to an HTTPS receiver, inbound SMTP with large mails from one sender)
 * against separate gateway, engine and inbound processes while faults are injected on a schedule: engine SIGKILL,
 * NATS SIGKILL + restart on its store, Redis SIGKILL + restart (appendonly), webhook receiver down, and store faults
 * that last a minute: the outbound queue at its share of JetStream's store and Redis at its maxmemory
 * (soak_store_faults.ts); meanwhile a second webhook is replaced
 * (deleted and created again through the API) every few seconds. Mail that waits in the engine (deferred,
 * scheduled, scheduled then canceled) is sent throughout, with real delays, while work-queue sweeps run every 5 s (soak_waiting.ts).
 * Reports lost, duplicated and stuck messages, webhook events lost per webhook, p99 latencies, RSS and open
 * descriptors over time. Uses NATS and Redis of its own (it kills them).
 */
/**
 * `store`: the store faults, alternately JetStream full and Redis full, the first at `firstS`, one every `everyS`,
 * each held `holdS` (one that would outlast the load is left out). `large`: one inbound sender's large mails.
 */
const QUICK = {
  durationS: 30, cycleS: 30, senders: 3, poisonHealthy: 150, poisonCount: 60, waitingEveryMs: 2000,
  store: { firstS: 4, everyS: 13, holdS: 8 }, large: { everyMs: 3000, bytes: 3 * 1024 * 1024 }
}
const FULL = {
  durationS: 600, cycleS: 60, senders: 4, poisonHealthy: 600, poisonCount: 200, waitingEveryMs: 3500,
  store: { firstS: 90, everyS: 120, holdS: 60 }, large: { everyMs: 10_000, bytes: 5 * 1024 * 1024 }
}
type Plan = typeof FULL

/**
 * `--duration=S` shortens (or lengthens) the load, keeping the plan's cycle and store-fault schedule.
 * `--jetstream-full=server` makes the whole NATS server's store full instead of the outbound queue's share
 * (soak_store_faults.ts): a fault the store budget exists to prevent, off by default.
 * `--logs=DIR` keeps what each process logged at `warn` and above, one file per role in DIR, to trace a failure.
 */
function planOf (opts: BenchOptions): Plan & { jetStreamFull: JetStreamFullMode } {
  const base = opts.quick ? QUICK : FULL
  const duration = Number(opts.args.duration)
  const mode = opts.args['jetstream-full'] ?? 'queue'
  if (mode !== 'queue' && mode !== 'server') throw new Error(`--jetstream-full=${mode}: queue or server`)
  return { ...(Number.isFinite(duration) && duration > 0 ? { ...base, durationS: duration } : base), jetStreamFull: mode }
}
// Deferred soak mail is answered 451 four times: retried after 1, 1, 2 and 30 s, it is accepted 34 s after its send.
const RETRY_SCHEDULE = '1,1,2,30,60'
const DEFER_TIMES = 4
/**
 * How long the drain waits, at most, for the last mail, event and webhook job once the load has stopped. A webhook
 * job's longest legitimate wait, counted from the last fault, which is over before the load ends (the receiver is back
 * up at 0.85 of the last cycle), by the soak's settings:
 * - held by an engine that was killed, or in flight at a NATS restart: handed out again after the job consumers'
 *   ack wait, OB_WEBHOOK_TIMEOUT_MS 30 s + 30 s slack = 60 s;
 * - handed back because its endpoint was behind or stalled: at most 60 s (retryLaterMs) × 1.5 (spread) = 90 s;
 * - its attempt: at most the request timeout, 30 s;
 * - a retry of an attempt that failed while the receiver was down: the receiver is down a tenth of a cycle (6 s, 3 s
 *   quick), long enough for the retries after 1, 2 and 2 s, so the next one is due after at most 5 s × 1.1 = 5.5 s;
 * - a parked event that could not be read, a retry that could not be stored, a batch handed back: 5 s, once.
 * 60 + 90 + 30 + 5.5 + 5 = 190.5 s, so 200 s. Mail is done sooner: scheduled mail is due at most 60 s after the load,
 * and a deferral's last retry comes 30 s after the one before. The drain ends as soon as everything is done.
 */
const DRAIN_MS = 200_000
/** Scheduled soak mail is due 65 s to 3 min after its send, and at most a minute after the load ends. */
const SCHEDULED_AHEAD_S = [65, 180] as const
const SCHEDULED_AFTER_LOAD_MS = 60_000

export interface SoakWorld {
  nats: ServerProcess
  redis: ServerProcess
  sink: SmtpSink
  receiver: HttpsReceiver
  receiverPort: number
  /** Event ids (with arrival time) received by receivers since closed (a restarted receiver starts with an empty record). */
  receivedIds: Received[]
  baseUrl: string
  key: string
  orgId: string
  domain: string
}

export async function runSoakBench (opts: BenchOptions): Promise<BenchResult> {
  const plan = planOf(opts)
  const logDir = opts.args.logs
  if (logDir !== undefined) mkdirSync(logDir, { recursive: true })
  const started = Date.now()
  const nats = await ServerProcess.nats()
  const redis = await ServerProcess.redis()
  const sink = await SmtpSink.start({ keepRaw: false, tempfailTimes: Number.MAX_SAFE_INTEGER })
  let receiver = await HttpsReceiver.start()
  const receiverPort = receiver.port
  const dns = await DnsServer.start({})
  const [httpPort, inboundPort, enginePort, inboundHttpPort] = [await freePort(), await freePort(), await freePort(), await freePort()]
  const children = new Set<ChildProcess>()
  const exits: Array<{ role: string, code: number | null, tail: string, at: number }> = []
  let replacer: WebhookReplacer | undefined
  const env = {
    NATS_URL: nats.url, REDIS_URL: redis.url, OB_SMTP_RELAY: sink.url, OB_DOMAIN_VERIFICATION: 'off', OB_DNS_SERVERS: dns.address,
    OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '1,2,2,5,5,10,10,20,30,60',
    OB_DELIVERY_RETRY_SCHEDULE: RETRY_SCHEDULE, OB_ENGINE_ACK_WAIT_MS: '5000', OB_ENGINE_SWEEP_MS: '5000', OB_PUBLISH_TIMEOUT_MS: '2000',
    OB_SHUTDOWN_TIMEOUT_MS: '5000', OB_LOG_LEVEL: logDir === undefined ? 'error' : 'warn', OB_ENTERPRISE_RATE_LIMIT: '600000',
    // a store of 1 GB: the outbound queue's share (about 300 MB) is what the JetStream-full fault fills
    OB_NATS_STORE_MB: '1024'
  }
  /** The process of each role now running; one that exits on its own is started again a second later, as systemd would. */
  const procs = new Map<string, ChildProcess>()
  let stopping = false
  const startRole = (role: string, extra: Record<string, string>): ChildProcess => {
    const run = spawnCli(['start'], { ...env, OB_ROLE: role, ...extra })
    children.add(run.child)
    procs.set(role, run.child)
    void run.done.then((r) => {
      children.delete(run.child)
      if (logDir !== undefined) appendFileSync(join(logDir, `${role}.log`), `${r.stdout}${r.stderr}-- exit ${r.code ?? r.signal}\n`)
      // A process that ended without the soak's SIGKILL or its final SIGTERM: why, from its last log lines.
      if (r.signal !== 'SIGKILL' && r.signal !== 'SIGTERM' && !stopping) {
        const tail = `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-2).join(' | ').slice(0, 400)
        process.stderr.write(`\nsoak: ${role} exited on its own (code ${r.code}): ${tail}\n`)
        exits.push({ role, code: r.code, tail, at: Date.now() })
        if (procs.get(role) === run.child) {
          setTimeout(() => { if (!stopping && procs.get(role) === run.child) startRole(role, extra) }, 1000)
        }
      }
    })
    return run.child
  }
  const engineExtra = { OB_HTTP_PORT: String(enginePort), OB_METRICS_PORT: '0' }
  try {
    // organisation, key, webhook and inbound route, written as the API would
    const config = loadConfig({ NATS_URL: nats.url, REDIS_URL: redis.url, OB_DOMAIN_VERIFICATION: 'off' })
    const nc = await connect({ servers: nats.url })
    await ensureStreams(nc, streamSettings(config))
    const cp = await ControlPlane.open(nc, { replicas: 1 })
    const domain = `soak-${Date.now().toString(36)}.bench.test`
    const org = await createOrganization(cp, config, { name: 'soak', domain, plan: 'enterprise' })
    const k = buildApiKey({
      orgId: org.organization_id, domainId: org.domain_id, name: 'soak', permissions: ['admin'], environment: 'live'
    })
    await cp.apiKeys.put(k.record.id, k.record)
    const now = new Date().toISOString()
    const wh = {
      id: newId('wh'),
      org_id: org.organization_id,
      url: receiver.url('/hook'),
      events: ['delivered', 'bounced', 'inbound.received'],
      secret: `whsec_${randomToken(32)}`,
      status: 'active' as const,
      created_at: now,
      updated_at: now
    }
    await cp.webhooks.put(`${org.organization_id}.${wh.id}`, wh)
    const route = {
      id: newId('rt'),
      org_id: org.organization_id,
      match: `support@${domain}`,
      action: { type: 'webhook' as const, include_attachments: false },
      created_at: now
    }
    await cp.routes.put(`${org.organization_id}.${route.id}`, route)
    cp.close()
    await nc.close()

    startRole('gateway', { OB_HTTP_PORT: String(httpPort), OB_SMTP_SUBMISSION_PORT: '0' })
    startRole('engine', engineExtra)
    startRole('inbound', { OB_HTTP_PORT: String(inboundHttpPort), OB_SMTP_INBOUND_PORT: String(inboundPort), OB_METRICS_PORT: '0' })
    const baseUrl = `http://127.0.0.1:${httpPort}`
    const world: SoakWorld = {
      nats, redis, sink, receiver, receiverPort, receivedIds: [], baseUrl, key: k.value, orgId: org.organization_id, domain
    }
    for (let i = 0; ; i++) {
      const warmupOrg = { orgId: org.organization_id, domainId: org.domain_id, domain, adminKey: k.value }
      const r = await send(baseUrl, k.value, sendBody(warmupOrg, 'warmup@healthy.example'))
      if (r.status === 202) break
      if (i > 300) throw new Error(`the gateway did not accept sends: ${r.status} ${r.error ?? ''}`)
      await sleep(100)
    }
    const tallies: SoakTallies = {
      accepted: [],
      statuses: new Map(),
      refusals: new Map(),
      inboundSent: 0,
      inboundAccepted: 0,
      largeAccepted: 0,
      largeRetried: 0,
      largeBytes: 0
    }

    opts.progress(0.02, 'poison comparison')
    const poison: PoisonImpact = await measurePoisonImpact(world, plan.poisonHealthy, plan.poisonCount)

    // ---- mixed load with faults on a schedule
    const sendLat = new LatencyWindow()
    const readLat = new LatencyWindow()
    const samples: SoakSample[] = []
    const faults: Array<{ t_s: number, fault: string }> = []
    let running = true
    let lastFault = ''
    replacer = await WebhookReplacer.start(nats.url, baseUrl, k.value, org.organization_id)
    const soakStart = Date.now()
    const waiting = startWaitingMail(world, {
      everyMs: plan.waitingEveryMs,
      deferTimes: DEFER_TIMES,
      aheadS: SCHEDULED_AHEAD_S,
      lastDueMs: soakStart + plan.durationS * 1000 + SCHEDULED_AFTER_LOAD_MS
    }, (id) => tallies.accepted.push(id))
    const orgRef = { orgId: org.organization_id, domainId: org.domain_id, domain, adminKey: k.value }
    const senders = Array.from({ length: plan.senders }, async (_v, s) => {
      let n = 0
      while (running) {
        // A client that retries with one Idempotency-Key until it gets an answer, as the client library does.
        const idem = `soak-${s}-${n++}`
        const body = sendBody(orgRef, `s${s}x${n}@healthy.example`)
        for (let attempt = 0; running || attempt === 0; attempt++) {
          const r = await send(baseUrl, k.value, body, { 'idempotency-key': idem })
          tallies.statuses.set(r.status, (tallies.statuses.get(r.status) ?? 0) + 1)
          if (r.status !== 202) {
            const why = `${r.status} ${r.code ?? r.error?.slice(0, 40) ?? ''}`
            tallies.refusals.set(why, (tallies.refusals.get(why) ?? 0) + 1)
          }
          if (r.status === 202) { sendLat.add(r.ms); tallies.accepted.push(r.id!); break }
          await sleep(Math.min(1000, Number(r.retryAfter ?? 1) * 1000))
        }
        await sleep(40)
      }
    })
    const reader = (async () => {
      while (running) {
        const id = tallies.accepted[Math.floor(Math.random() * tallies.accepted.length)]
        if (id !== undefined) {
          const t0 = Date.now()
          const res = await fetch(`${baseUrl}/v1/messages/${id}`, { headers: { authorization: `Bearer ${k.value}` } })
            .catch(() => undefined)
          await res?.arrayBuffer()
          if (res?.status === 200) readLat.add(Date.now() - t0)
        }
        await sleep(100)
      }
    })()
    const inboundPace = { everyMs: 500, largeEveryMs: plan.large.everyMs, largeBytes: plan.large.bytes }
    const stopInbound = startInbound(inboundPort, domain, inboundPace, tallies)
    const servers = new SoakServers(nats, redis)
    const kills = new KillAccounting(redis.url, sink, domain)
    const mark = (fault: string): void => { lastFault = fault; faults.push({ t_s: Math.round((Date.now() - soakStart) / 1000), fault }) }
    const cycle = async (): Promise<void> => {
      const at = async (fraction: number, cycleStart: number): Promise<boolean> => {
        const wait = cycleStart + fraction * plan.cycleS * 1000 - Date.now()
        if (wait > 0) await sleep(wait)
        return running && Date.now() - soakStart < plan.durationS * 1000
      }
      for (let c = 0; running && Date.now() - soakStart < plan.durationS * 1000; c++) {
        const cs = soakStart + c * plan.cycleS * 1000
        if (!await at(0.15, cs)) break
        mark('engine SIGKILL')
        const killed = procs.get('engine')!
        if (killed.exitCode === null && killed.signalCode === null) {
          await new Promise<void>((resolve) => { killed.once('exit', () => resolve()); killed.kill('SIGKILL') })
        }
        // Before the next engine starts: which of the killed engine's attempts had no recorded reply.
        await Promise.all([sleep(500), kills.afterKill()])
        startRole('engine', engineExtra)
        if (!await at(0.35, cs)) break
        mark('NATS restart'); await servers.killNats(2000)
        if (!await at(0.55, cs)) break
        mark('Redis restart'); await servers.killRedis(2000)
        if (!await at(0.75, cs)) break
        mark('receiver down')
        for (const r of receiver.on('/hook')) {
          world.receivedIds.push({ id: (JSON.parse(r.rawBody.toString()) as { id: string }).id, at: r.at })
        }
        await receiver.close(); await sleep(plan.cycleS * 100)
        receiver = await HttpsReceiver.start(undefined, receiverPort); world.receiver = receiver
      }
    }
    const storeFaults = async (): Promise<void> => {
      for (let k = 0; ; k++) {
        const startS = plan.store.firstS + k * plan.store.everyS
        if (startS + plan.store.holdS > plan.durationS) return
        const wait = soakStart + startS * 1000 - Date.now()
        if (wait > 0) await sleep(wait)
        if (!running) return
        if (k % 2 === 0) {
          const what = plan.jetStreamFull === 'queue' ? 'JetStream queue' : 'JetStream server'
          mark(`${what} full`); await servers.jetStreamFull(plan.store.holdS * 1000, plan.jetStreamFull); mark(`${what} freed`)
        } else { mark('Redis full'); await servers.redisFullFor(plan.store.holdS * 1000); mark('Redis freed') }
      }
    }
    const faulting = Promise.all([cycle(), storeFaults()])
    while (Date.now() - soakStart < plan.durationS * 1000) {
      await sleep(1000)
      const s = sendLat.take()
      const g = processUsage(procs.get('gateway')?.pid)
      const e = processUsage(procs.get('engine')?.pid)
      samples.push({
        t_s: Math.round((Date.now() - soakStart) / 1000), send_p99_ms: s.p99, read_p99_ms: readLat.take().p99, sends: s.count,
        gateway_rss_mb: g?.rssMb ?? 0, gateway_fds: g?.fds ?? 0, engine_rss_mb: e?.rssMb ?? 0, engine_fds: e?.fds ?? 0, fault: lastFault
      })
      lastFault = ''
      opts.progress(0.1 + 0.75 * (Date.now() - soakStart) / (plan.durationS * 1000), 'soak with faults')
    }
    running = false
    await Promise.all([...senders, reader, stopInbound(), faulting, waiting.stop(), replacer.stop()])

    opts.progress(0.9, 'draining')
    const checks = await drain(world, replacer, tallies, DRAIN_MS, soakStart, faults)
    let pending: PendingState | undefined
    const pnc = await connect({ servers: nats.url })
    try { pending = await pendingState(pnc) } finally { await pnc.close() }
    const canceledIds = new Set(waiting.sent.filter((x) => x.kind === 'canceled').map((x) => x.id))
    const left = pending.outboundMessages > 0 ? await leftovers(world, canceledIds) : []
    // which job consumer still owes work, and the jobs it holds, decoded
    const stuckJobs = pending.webhookJobs > 0 ? await stuckWebhookJobs(nats.url) : []
    const waited = await checkWaitingMail(world, waiting.sent, waiting.cancelRefused(), soakStart)
    const exitsAt = exits.map(({ at, ...x }) => ({ ...x, t_s: Math.round((at - soakStart) / 1000) }))
    return soakReport(
      opts.quick, started, plan.durationS, tallies, checks, pending, samples, faults, sendLat, readLat, poison, left, waited, kills,
      exitsAt, servers.fillerBytes, stuckJobs
    )
  } finally {
    stopping = true
    for (const c of children) c.kill('SIGTERM')
    await sleep(1000)
    for (const c of children) c.kill('SIGKILL')
    await receiver.close().catch(() => {})
    await replacer?.close()
    await sink.close()
    await dns.close()
    await nats.dispose()
    await redis.dispose()
  }
}

/**
 * `node dist/bench/soak.js [--quick] [--duration=S]`: one soak run with NATS and Redis of its own; writes bench/results/soak.json
 * and soak.svg.
 */
async function main (): Promise<number> {
  const { quick, args } = parseBenchArgs(process.argv.slice(2), ['soak'])
  const progress = (f: number, label: string): void => { process.stderr.write(`\rsoak ${Math.round(f * 100)} % ${label}        `) }
  const result = await runSoakBench({ quick, natsUrl: '', redisUrl: '', args, progress })
  process.stderr.write('\n')
  const dir = fileURLToPath(new URL(`../../bench/results/${quick ? 'quick/' : ''}`, import.meta.url))
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'soak.json'), JSON.stringify({ ...result, finished_at: new Date().toISOString() }, null, 2) + '\n')
  result.charts.forEach((c, i) => { writeFileSync(join(dir, i === 0 ? 'soak.svg' : `soak-${i + 1}.svg`), renderChart(c)) })
  process.stderr.write(`${result.passed ? 'PASS' : 'FAIL'} soak: ${result.summary}\n`)
  for (const f of result.failures) process.stderr.write(`  - ${f}\n`)
  return result.passed ? 0 : 1
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then((code) => process.exit(code), (err: unknown) => {
    process.stderr.write(`${String((err as Error).stack ?? err)}\n`)
    process.exit(1)
  })
}
