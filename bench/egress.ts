import type { ChildProcess } from 'node:child_process'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import type { NatsConnection } from '@nats-io/transport-node'
import { loadConfig, type Config } from '../config/mod.ts'
import { connectNats, ensureStreams } from '../stores/clients/mod.ts'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { streamSettings, type QueuedMessage } from '../protocol/mod.ts'
import { createOrganization } from '../gateway/control/orgs.ts'
import { spawnCli } from '../test/helpers/cli.ts'
import { DnsServer } from '../test/helpers/dns_server.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../test/helpers/engine_env.ts'
import type { TestOrg } from '../test/helpers/outbox.ts'
import { freePort } from '../test/helpers/ports.ts'
import { ServerProcess } from '../test/helpers/servers.ts'
import { SmtpSink } from '../test/helpers/smtp_sink.ts'
import { cpuSnapshot } from './proc_cpu.ts'
import { egressReport, type Mode, type PhaseFigures } from './egress_report.ts'
import type { BenchOptions, BenchResult } from './types.ts'

/**
 * What the egress layer costs mail to MX hosts: delivered/s and CPU per delivered message with OB_EGRESS_SHAPING=on
 * and =off, side by side in one run, the same messages to the same sink. One engine process (OB_ROLE=engine, the
 * default 4 shards on 2 threads) runs at a time, restarted for each phase with the switch set; everything else
 * (NATS, Redis, DNS server, sink, organisation, pool) is shared. The recipient domains are hosted on Google, on
 * Microsoft 365 and on a site of its own (a test DNS server answers their MX, all at 127.0.0.1); the organisation's
 * pool has two sources bound to 127.0.0.2 and 127.0.0.3. Every limit of those lanes is raised out of reach, so
 * the difference is what the layer does per message (routing, Redis round trips, slots), not its limits.
 */
const FULL = { rounds: 3, warm: 500, messages: 2500 }
const QUICK = { rounds: 1, warm: 200, messages: 600 }
/** Messages published and not yet at the sink, at most: the engine always has work, the queue never fills up ahead of it. */
const WINDOW = 1000
const BATCH = 50
/** A phase fails when no message arrived for this long. */
const STALL_MS = 30_000
/** A deferred recipient is tried again a second later, not after the default minute: a deferral is reported, not waited for. */
const RETRY_SCHEDULE = '1,1,2,5,10'
const PADDING = '<p>Thank you for your order. This paragraph pads the message to a realistic size for a transactional email.</p>'
const HTML = `<html><body><h1>Your receipt</h1>${PADDING.repeat(44)}</body></html>`

/** Recipient domain → its MX host: one per provider the layer tells apart (google, microsoft, a site). */
const DOMAINS: ReadonlyArray<[domain: string, mx: string]> = [
  ['workspace-shop.test', 'aspmx.l.google.com'],
  ['contoso-bench.test', 'contoso-bench-test.mail.protection.outlook.com'],
  ['own-site.test', 'mx1.own-site.test']
]
export const SOURCES = [{ name: 'bench2', address: '127.0.0.2' }, { name: 'bench3', address: '127.0.0.3' }] as const
/**
 * Out of reach: connections above what the engine can have in flight (4 shards × 64), a rate far above any this
 * machine delivers, 100 messages per connection as the engine's own pools without shaping.
 */
export const HIGH_LIMITS = { maxConnections: 1000, messagesPerConnection: 100, messagesPerMinute: 1_000_000 }
/** Both modes: every pool may open a connection per message it holds (the limit never binds), as the lanes above. */
const POOL_CONNECTIONS = '100'

interface World {
  nats: ServerProcess
  redis: ServerProcess
  dns: DnsServer
  sink: SmtpSink
  org: TestOrg
  config: Config
  env: Record<string, string>
  nc: NatsConnection
  arrivals: Arrivals
  events: EventWatcher
}

/** What reached the sink, compacted as it arrives: per Message-ID how often, when first, from which address, over TLS. */
class Arrivals {
  readonly count = new Map<string, number>()
  readonly at = new Map<string, number>()
  readonly from = new Map<string, string>()
  readonly insecure = new Set<string>()
  constructor (private readonly sink: SmtpSink) {}

  /** Takes what the sink received since the last call; returns the Message-IDs seen for the first time. */
  take (): string[] {
    const fresh: string[] = []
    for (const m of this.sink.messages.splice(0)) {
      const n = (this.count.get(m.messageId) ?? 0) + 1
      this.count.set(m.messageId, n)
      if (n > 1) continue
      fresh.push(m.messageId)
      this.at.set(m.messageId, m.receivedAt)
      this.from.set(m.messageId, m.remoteAddress)
      if (!m.secure) this.insecure.add(m.messageId)
    }
    return fresh
  }
}

function message (w: World, i: number): QueuedMessage {
  const [domain] = DOMAINS[i % DOMAINS.length]!
  return queuedMessage(w.org, {
    to: [`customer${i}@${domain}`], subject: 'Your receipt', html: HTML, text: 'Thank you for your order.',
    track_opens: false, track_clicks: false
  })
}

const messageIdOf = (w: World, m: QueuedMessage): string => `<${m.id}@${w.org.domain}>`

/**
 * Publishes `n` messages while the engine delivers, keeping at most WINDOW of them between publish and sink, and
 * waits until each is at the sink. Returns their Message-IDs and when the first was published.
 */
async function burst (w: World, n: number, engineGone: Promise<never>): Promise<{ ids: string[], t0: number }> {
  const ids: string[] = []
  const pending = new Set<string>()
  const t0 = Date.now()
  let lastMove = Date.now()
  let arrived = 0
  const settle = (): void => {
    for (const id of w.arrivals.take()) {
      if (pending.delete(id)) { arrived++; lastMove = Date.now() }
    }
  }
  const waitFor = async (ok: () => boolean): Promise<void> => {
    await Promise.race([engineGone, (async () => {
      for (;;) {
        settle()
        if (ok()) return
        if (Date.now() - lastMove > STALL_MS) throw new Error(`nothing arrived for ${STALL_MS / 1000} s; ${pending.size} missing`)
        await w.sink.until(() => w.sink.messages.length > 0, 200).catch(() => {})
      }
    })()])
  }
  for (let i = 0; i < n; i += BATCH) {
    await waitFor(() => ids.length - arrived < WINDOW)
    const batch = Array.from({ length: Math.min(BATCH, n - i) }, (_v, j) => message(w, i + j))
    // pending before the publish: a message may be at the sink before its PubAck is here
    for (const m of batch) { const id = messageIdOf(w, m); ids.push(id); pending.add(id) }
    await Promise.all(batch.map(async (m) => { await publishQueued(w.nc, w.config, m) }))
  }
  await waitFor(() => pending.size === 0)
  return { ids, t0 }
}

/** One phase: an engine with the switch set, a warm-up burst (not counted), then the measured burst. */
async function phase (w: World, mode: Mode, round: number, plan: typeof FULL, profileDir?: string): Promise<PhaseFigures> {
  const env = { ...w.env, OB_EGRESS_SHAPING: mode }
  const nodeArgs = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, `${mode}-${round}`)}`]
  const run = spawnCli(['start'], env, nodeArgs)
  const engine: ChildProcess = run.child
  let stderr = ''
  engine.stderr!.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-2000) })
  const gone = run.done.then((r) => { throw new Error(`the ${mode} engine exited (${r.code ?? r.signal}): ${r.stderr.slice(-2000)}`) })
  gone.catch(() => {}) // observed by the bursts; after the measured one the exit is the benchmark's own SIGTERM
  try {
    const warm = await burst(w, plan.warm, gone).catch((err: Error) => { throw withLog(err, mode, 'warm-up', stderr) })
    const connections0 = w.sink.connections
    const load0 = loadavg()[0]!
    const cpu = [engine.pid, w.redis.pid, w.nats.pid].map((pid) => cpuSnapshot([pid]))
    const measured = await burst(w, plan.messages, gone).catch((err: Error) => { throw withLog(err, mode, 'measured burst', stderr) })
    const [engineUs, redisUs, natsUs] = cpu.map((c) => c()) as [number, number, number]
    const last = Math.max(...measured.ids.map((id) => w.arrivals.at.get(id)!))
    const seconds = (last - measured.t0) / 1000
    const all = [...warm.ids, ...measured.ids]
    const perMsg = (us: number): number => Math.round(us / measured.ids.length) / 1000
    return {
      mode,
      round,
      messages: measured.ids.length,
      seconds: Math.round(seconds * 100) / 100,
      perS: Math.round(measured.ids.length / seconds),
      cpuMsPerMsg: { engine: perMsg(engineUs), redis: perMsg(redisUs), nats: perMsg(natsUs) },
      load: [load0, loadavg()[0]!],
      newConnections: w.sink.connections - connections0,
      ids: all,
      fromAddresses: countBy(all.map((id) => w.arrivals.from.get(id) ?? '?')),
      deferrals: [],
      insecure: all.filter((id) => w.arrivals.insecure.has(id)).length
    }
  } finally {
    engine.kill('SIGTERM')
    await Promise.race([run.done, new Promise((resolve) => setTimeout(resolve, 20_000).unref())])
    engine.kill('SIGKILL')
  }
}

function withLog (err: Error, mode: Mode, what: string, stderr: string): Error {
  return new Error(`shaping ${mode}, ${what}: ${err.message}${stderr === '' ? '' : `; the engine logged: ${stderr.trim()}`}`)
}

function countBy (xs: string[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const x of xs) out[x] = (out[x] ?? 0) + 1
  return out
}

async function startWorld (): Promise<Omit<World, 'arrivals' | 'events'> & { close: () => Promise<void> }> {
  const [nats, redis] = await Promise.all([ServerProcess.nats(), ServerProcess.redis()])
  const sink = await SmtpSink.start({ keepRaw: false })
  const dns = await DnsServer.start({
    MX: Object.fromEntries(DOMAINS.map(([d, mx]) => [d, [{ exchange: mx, priority: 10 }]])),
    A: Object.fromEntries(DOMAINS.map(([, mx]) => [mx, ['127.0.0.1']]))
  })
  const env: Record<string, string> = {
    NATS_URL: nats.url,
    REDIS_URL: redis.url,
    OB_ROLE: 'engine',
    OB_HTTP_PORT: String(await freePort()),
    OB_METRICS_PORT: '0',
    OB_LOG_LEVEL: 'error',
    OB_DOMAIN_VERIFICATION: 'off',
    OB_DNS_SERVERS: dns.address,
    OB_SMTP_OUTBOUND_PORT: String(sink.port),
    OB_SMTP_ALLOW_PRIVATE: 'true',
    OB_SMTP_POOL_CONNECTIONS: POOL_CONNECTIONS,
    OB_DELIVERY_RETRY_SCHEDULE: RETRY_SCHEDULE
  }
  const config = loadConfig(env)
  const nc = await connectNats(config.nats.servers, 'bench-egress')
  const close = async (): Promise<void> => {
    await nc.close()
    await sink.close()
    await dns.close()
    await Promise.all([nats.dispose(), redis.dispose()])
  }
  try {
    await ensureStreams(nc, streamSettings(config))
    const cp = await ControlPlane.open(nc, { replicas: 1 })
    const domain = 'egress-bench.example'
    const made = await createOrganization(cp, config, { name: 'egress', domain, plan: 'enterprise' })
    for (const s of SOURCES) await cp.egress.addSource({ ...s, ehlo: `${s.name}.outbox.test` })
    await cp.egress.putPool('bench', SOURCES.map((s) => ({ source: s.name, weight: 50 })))
    await cp.egress.assignOrg(made.organization_id, 'bench')
    await cp.egress.putLimits({ google: HIGH_LIMITS, microsoft: HIGH_LIMITS, default: HIGH_LIMITS })
    cp.close()
    const org = { orgId: made.organization_id, domainId: made.domain_id, domain, adminKey: made.api_key }
    return { nats, redis, dns, sink, org, config, env, nc, close }
  } catch (err) {
    await close()
    throw err
  }
}

/**
 * `--profile=DIR`: each phase's engine runs with `--cpu-prof`, its profiles in DIR/<mode>-<round>/.
 * `--messages=N`, `--rounds=N`: a shorter or longer run by hand.
 */
export async function runEgressBench (opts: BenchOptions): Promise<BenchResult> {
  const base = opts.quick ? QUICK : FULL
  const positive = (v: string | undefined, fallback: number): number =>
    v !== undefined && Number.isInteger(Number(v)) && Number(v) > 0 ? Number(v) : fallback
  const plan = { ...base, messages: positive(opts.args.messages, base.messages), rounds: positive(opts.args.rounds, base.rounds) }
  const profileDir = opts.args.profile !== undefined ? resolve(opts.args.profile) : undefined
  const started = Date.now()
  opts.progress(0, 'starting NATS, Redis, DNS server and sink')
  const world = await startWorld()
  const events = await EventWatcher.start(world.nc, world.org.orgId)
  const w: World = { ...world, arrivals: new Arrivals(world.sink), events }
  const phases: PhaseFigures[] = []
  const failures: string[] = []
  try {
    for (let r = 0; r < plan.rounds; r++) {
      // alternate which mode goes first, so drift in the machine's load falls on both alike
      const order: Mode[] = r % 2 === 0 ? ['on', 'off'] : ['off', 'on']
      for (const [k, mode] of order.entries()) {
        opts.progress((r * 2 + k) / (plan.rounds * 2), `round ${r + 1}: shaping ${mode}`)
        phases.push(await phase(w, mode, r + 1, plan, profileDir))
      }
    }
  } catch (err) {
    failures.push((err as Error).message)
  } finally {
    events.stop()
    await world.close()
  }
  w.arrivals.take()
  const deferrals = deferralsOf(events)
  for (const p of phases) p.deferrals = p.ids.map((id) => deferrals.get(id.slice(1, id.indexOf('@'))) ?? []).flat()
  return egressReport({
    quick: opts.quick, started, plan, phases, failures, counts: w.arrivals.count, limits: HIGH_LIMITS, retrySchedule: RETRY_SCHEDULE
  })
}

/** Message id → the SMTP replies of its `deferred` events. */
function deferralsOf (events: EventWatcher): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const e of events.events) {
    if (e.type !== 'deferred' || e.message_id === undefined) continue
    const list = out.get(e.message_id) ?? []
    list.push(String((e.data as { smtp_response?: unknown }).smtp_response ?? ''))
    out.set(e.message_id, list)
  }
  return out
}
