import type { ChildProcess } from 'node:child_process'
import { loadConfig } from '../config/mod.ts'
import { connectNats, ensureStreams } from '../stores/clients/mod.ts'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { streamSettings, type QueuedMessage } from '../protocol/mod.ts'
import { createOrganization } from '../gateway/control/orgs.ts'
import { spawnCli } from '../test/helpers/cli.ts'
import { publishQueued, queuedMessage } from '../test/helpers/engine_env.ts'
import type { TestOrg } from '../test/helpers/outbox.ts'
import { freePort } from '../test/helpers/ports.ts'
import { ServerProcess } from '../test/helpers/servers.ts'
import { SmtpSink } from '../test/helpers/smtp_sink.ts'
import { nothingPending, pendingState, untilNothingPending } from '../test/integration/faults/fault_env.ts'
import { cpuSnapshot } from './proc_cpu.ts'
import { poisonReport, type PoisonRound, type RunFigures } from './poison_report.ts'
import type { BenchOptions, BenchResult } from './types.ts'

/**
 * What a destination that answers 451 to everything costs other mail. One engine process (OB_ROLE=engine, the
 * default 4 shards on 2 threads) delivers through a relay sink that answers 451 to every `tempfail…` recipient.
 * Each round times a burst of healthy messages alone, then the same burst with poison messages mixed in
 * (one in every POISON_EVERY published is poison), on the soak's dense retry schedule so that the poison is
 * retried several times while the healthy burst is delivered. The figure is the healthy rate and latency
 * (publish acknowledged → at the sink) of the two runs, in the same process and the same minute.
 */
const QUICK = { rounds: 1, healthy: 500, poison: 250, warm: 150 }
const FULL = { rounds: 5, healthy: 1500, poison: 750, warm: 300 }
const BATCH = 100 // healthy messages published at once
const RETRY_SCHEDULE = '1,1,2,2,5,5,10' // the soak's: 26 s of retries, seven deferrals per poison message
const PADDING = '<p>Thank you for your order. This paragraph pads the message to a realistic size for a transactional email.</p>'
const HTML = `<html><body><h1>Your receipt</h1>${PADDING.repeat(44)}</body></html>`

interface World {
  nats: ServerProcess
  redis: ServerProcess
  engine?: ChildProcess
  /** Rejects with the engine's stderr if it exits while the benchmark waits for mail. */
  engineGone: Promise<never>
  sink: SmtpSink
  org: TestOrg
  config: ReturnType<typeof loadConfig>
}

/** Message-ID at the sink → when it arrived; filled whenever the sink wakes its waiters (once per message). */
class Arrivals {
  readonly at = new Map<string, number>()
  private seen = 0
  constructor (private readonly sink: SmtpSink) {}
  stamp (): void {
    const now = Date.now()
    for (; this.seen < this.sink.messages.length; this.seen++) {
      const id = this.sink.messages[this.seen]!.messageId
      if (!this.at.has(id)) this.at.set(id, now)
    }
  }

  async until (ids: string[], timeoutMs: number): Promise<void> {
    await this.sink.until(() => { this.stamp(); return ids.every((id) => this.at.has(id)) }, timeoutMs)
  }
}

function message (w: World, to: string): QueuedMessage {
  return queuedMessage(w.org, {
    to: [to], subject: 'Your receipt', html: HTML, text: 'Thank you for your order.', track_opens: false, track_clicks: false
  })
}

function percentile (sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
}

/** Publishes `healthy` messages with `poison` ones spread evenly among them, then waits for every healthy one at the sink. */
async function burst (
  w: World, arrivals: Arrivals, tag: string, healthy: number, poison: number
): Promise<RunFigures & { poisonIds: string[] }> {
  const nc = await connectNats(w.config.nats.servers, 'bench-poison')
  const sent = new Map<string, number>()
  const poisonIds: string[] = []
  const cpu = [w.engine?.pid, w.nats.pid, w.redis.pid].map((pid) => cpuSnapshot([pid]))
  const own0 = process.cpuUsage()
  const t0 = Date.now()
  const log0 = w.sink.rcptLog.length
  // Healthy and poison are published by two loops side by side, so the healthy messages go out at the same pace
  // in both runs and their latency compares like with like.
  const publish = async (
    count: number, batch: number, make: (i: number) => QueuedMessage, acked: (m: QueuedMessage) => void
  ): Promise<void> => {
    for (let i = 0; i < count; i += batch) {
      await Promise.all(Array.from({ length: Math.min(batch, count - i) }, async (_v, j) => {
        const m = make(i + j)
        await publishQueued(nc, w.config, m)
        acked(m)
      }))
    }
  }
  try {
    await Promise.all([
      publish(healthy, BATCH, (i) => message(w, `${tag}${i}@healthy.example`), (m) => sent.set(`<${m.id}@${w.org.domain}>`, Date.now())),
      // a poison destination of its own per burst: each mixed burst meets it for the first time
      publish(
        poison, Math.max(1, Math.round(BATCH * poison / healthy)),
        (i) => message(w, `tempfail${i}@poison-${tag}.example`), (m) => poisonIds.push(m.id)
      )
    ])
  } finally {
    await nc.close()
  }
  const ids = [...sent.keys()]
  await Promise.race([arrivals.until(ids, 120_000), w.engineGone])
  const lat = ids.map((id) => arrivals.at.get(id)! - sent.get(id)!).sort((a, b) => a - b)
  const last = Math.max(...ids.map((id) => arrivals.at.get(id)!))
  const own = process.cpuUsage(own0)
  const [engineMs, natsMs, redisMs] = cpu.map((c) => Math.round(c() / 1000)) as [number, number, number]
  const benchMs = Math.round((own.user + own.system) / 1000)
  const deferrals = w.sink.rcptLog.slice(log0).filter((l) => l.endsWith(' 451')).length
  return {
    deferrals,
    cpu_ms: engineMs + natsMs + redisMs + benchMs,
    cpu_split_ms: { engine: engineMs, nats: natsMs, redis: redisMs, bench: benchMs },
    healthy: ids.length,
    poison,
    seconds: Math.round((last - t0) / 10) / 100,
    rate: Math.round((ids.length / ((last - t0) / 1000)) * 10) / 10,
    p50_ms: percentile(lat, 0.5),
    p99_ms: percentile(lat, 0.99),
    poisonIds
  }
}

export async function runPoisonBench (opts: BenchOptions): Promise<BenchResult> {
  const plan = opts.quick ? QUICK : FULL
  const started = Date.now()
  const nats = await ServerProcess.nats()
  const redis = await ServerProcess.redis()
  const sink = await SmtpSink.start({ keepRaw: false, tempfailTimes: Number.MAX_SAFE_INTEGER })
  let engine: ChildProcess | undefined
  try {
    const env = {
      NATS_URL: nats.url, REDIS_URL: redis.url, OB_SMTP_RELAY: sink.url, OB_DOMAIN_VERIFICATION: 'off',
      OB_DELIVERY_RETRY_SCHEDULE: RETRY_SCHEDULE, OB_LOG_LEVEL: 'error', OB_ROLE: 'engine',
      OB_HTTP_PORT: String(await freePort()), OB_METRICS_PORT: '0',
      ...Object.fromEntries(Object.entries(opts.args).filter(([k]) => k.startsWith('OB_')))
    }
    const config = loadConfig(env)
    const nc = await connectNats(config.nats.servers, 'bench-poison-setup')
    await ensureStreams(nc, streamSettings(config))
    const cp = await ControlPlane.open(nc, { replicas: 1 })
    const made = await createOrganization(cp, config, { name: 'poison', domain: 'poison-bench.example', plan: 'enterprise' })
    cp.close()
    await nc.close()
    const org = { orgId: made.organization_id, domainId: made.domain_id, domain: 'poison-bench.example', adminKey: made.api_key }
    const w: World = { nats, redis, sink, engineGone: new Promise<never>(() => {}), config, org }
    const run = spawnCli(['start'], env)
    engine = run.child
    w.engine = engine
    w.engineGone = run.done.then((r) => { throw new Error(`the engine exited (${r.code ?? r.signal}): ${r.stderr.slice(-2000)}`) })
    w.engineGone.catch(() => {}) // observed by the bursts; after the last one the exit is the benchmark's own SIGTERM
    const arrivals = new Arrivals(sink)

    opts.progress(0.05, 'warming up')
    // pools, JIT and Redis scripts warm before anything is timed; the poison destination is first met in the mixed burst
    await burst(w, arrivals, 'warm', plan.warm, 0)
    const rounds: PoisonRound[] = []
    const allPoison: string[] = []
    const drainS: number[] = []
    let stuck = 0
    for (let r = 0; r < plan.rounds; r++) {
      opts.progress(0.1 + 0.8 * r / plan.rounds, `round ${r + 1}: healthy alone`)
      const alone = await burst(w, arrivals, `a${r}x`, plan.healthy, 0)
      opts.progress(0.1 + 0.8 * (r + 0.5) / plan.rounds, `round ${r + 1}: healthy with poison`)
      const mixed = await burst(w, arrivals, `m${r}x`, plan.healthy, plan.poison)
      allPoison.push(...mixed.poisonIds)
      rounds.push({ alone, mixed })
      // the next baseline must not run while this round's poison is still held or retried; the last wait is the
      // check that nothing stays stuck (skipped in quick mode, where it would take most of the time)
      if (r + 1 < plan.rounds || !opts.quick) {
        opts.progress(0.1 + 0.8 * (r + 0.75) / plan.rounds, `round ${r + 1}: waiting for the poison to run out`)
        const t = Date.now()
        const left = await untilNothingPending(nats.url, 90_000)
        drainS.push(Math.round((Date.now() - t) / 100) / 10)
        if (!nothingPending(left)) stuck = left.outboundMessages
      }
    }
    const counts = new Map<string, number>()
    for (const m of sink.messages) counts.set(m.messageId, (counts.get(m.messageId) ?? 0) + 1)
    const poisonAtSink = allPoison.filter((id) => counts.has(`<${id}@${w.org.domain}>`)).length
    const duplicated = [...counts.values()].filter((n) => n > 1).length
    const nc2 = await connectNats(config.nats.servers, 'bench-poison-check')
    const pending = await pendingState(nc2).finally(async () => await nc2.close())
    return poisonReport(opts.quick, started, rounds, {
      poisonAtSink, duplicated, stuck, stillQueued: pending.outboundMessages, drainS, retrySchedule: RETRY_SCHEDULE
    })
  } finally {
    engine?.kill('SIGTERM')
    if (engine !== undefined && engine.exitCode === null) {
      await new Promise((resolve) => { engine!.once('exit', resolve); setTimeout(resolve, 3000).unref() })
    }
    engine?.kill('SIGKILL')
    await sink.close()
    await nats.dispose()
    await redis.dispose()
  }
}
