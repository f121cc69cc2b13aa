import type { BenchResult } from './types.ts'

export type Mode = 'on' | 'off'

/** One measured burst of one phase (an engine started with OB_EGRESS_SHAPING=mode). */
export interface PhaseFigures {
  mode: Mode
  round: number
  messages: number
  /** First publish of the measured burst → its last message at the sink. */
  seconds: number
  perS: number
  /** CPU (user + system, every thread) per delivered message during the measured burst, ms. */
  cpuMsPerMsg: { engine: number, redis: number, nats: number }
  /** 1-minute load average when the measured burst started and ended. */
  load: [number, number]
  /** SMTP sessions the sink saw opened during the measured burst (the warm-up's stay open and are reused). */
  newConnections: number
  /** Message-IDs of the phase, warm-up included, for the checks. */
  ids: string[]
  /** Client address at the sink → messages of the phase (warm-up included). */
  fromAddresses: Record<string, number>
  /** Messages of the phase that did not arrive over STARTTLS. */
  insecure: number
  /** The SMTP reply of every `deferred` event of the phase's messages (warm-up included); filled in at the end. */
  deferrals: string[]
}

export interface EgressRun {
  quick: boolean
  started: number
  plan: { rounds: number, warm: number, messages: number }
  phases: PhaseFigures[]
  failures: string[]
  /** Message-ID → times it reached the sink, over the whole run. */
  counts: ReadonlyMap<string, number>
  limits: { maxConnections: number, messagesPerConnection: number, messagesPerMinute: number }
  retrySchedule: string
}

const SOURCE_ADDRESSES = ['127.0.0.2', '127.0.0.3']

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/** `3× 421 …; 1× …`: each distinct reply (its first 120 characters) with how often. */
function replies (all: string[]): string {
  const out: Record<string, number> = {}
  for (const r of all) { const k = r.slice(0, 120); out[k] = (out[k] ?? 0) + 1 }
  return Object.entries(out).map(([r, n]) => `${n}× ${r}`).join('; ')
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000
const r2 = (x: number): number => Math.round(x * 100) / 100

/** Every message of every phase at the sink exactly once, and from the addresses its mode sends from. */
function checkFailures (run: EgressRun): string[] {
  const out: string[] = []
  for (const p of run.phases) {
    const what = `round ${p.round}, shaping ${p.mode}`
    const missing = p.ids.filter((id) => !run.counts.has(id)).length
    const twice = p.ids.filter((id) => (run.counts.get(id) ?? 0) > 1).length
    if (missing > 0) out.push(`${what}: ${missing} message(s) never reached the sink`)
    if (twice > 0) out.push(`${what}: ${twice} message(s) reached the sink more than once`)
    const allowed = p.mode === 'on' ? SOURCE_ADDRESSES : ['127.0.0.1']
    const stray = Object.entries(p.fromAddresses).filter(([a]) => !allowed.includes(a))
    if (stray.length > 0) {
      out.push(`${what}: mail from ${stray.map(([a, n]) => `${a} (${n})`).join(', ')}, expected ${allowed.join(' or ')}`)
    }
    if (p.mode === 'on' && SOURCE_ADDRESSES.some((a) => (p.fromAddresses[a] ?? 0) === 0)) {
      out.push(`${what}: not every source of the pool sent (${JSON.stringify(p.fromAddresses)})`)
    }
  }
  return out
}

/**
 * The egress benchmark's result. Only behaviour fails the run (a message lost or delivered twice, mail from an
 * address its mode does not send from, a phase that stalled); the layer's cost is reported, with no target.
 */
export function egressReport (run: EgressRun): BenchResult {
  const failures = [...run.failures, ...checkFailures(run)]
  const of = (mode: Mode): PhaseFigures[] => run.phases.filter((p) => p.mode === mode)
  const rounds = [...new Set(run.phases.map((p) => p.round))]
  const pairs = rounds.map((r) => ({ r, on: of('on').find((p) => p.round === r), off: of('off').find((p) => p.round === r) }))
    .filter((x): x is { r: number, on: PhaseFigures, off: PhaseFigures } => x.on !== undefined && x.off !== undefined)
  const med = (mode: Mode, f: (p: PhaseFigures) => number): number => median(of(mode).map(f))
  const cost = (f: (p: PhaseFigures) => number): number => median(pairs.map((x) => f(x.on) - f(x.off)))
  const engine = (p: PhaseFigures): number => p.cpuMsPerMsg.engine
  const redis = (p: PhaseFigures): number => p.cpuMsPerMsg.redis
  const nats = (p: PhaseFigures): number => p.cpuMsPerMsg.nats
  const both = (p: PhaseFigures): number => engine(p) + redis(p)
  const ratio = median(pairs.map((x) => x.on.perS / x.off.perS))
  const loads = run.phases.flatMap((p) => p.load)
  const loadRange = loads.length === 0 ? 'n/a' : `${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`
  const summary = pairs.length === 0
    ? 'incomplete: no round measured both modes'
    : `shaping on ${med('on', (p) => p.perS)} delivered/s, off ${med('off', (p) => p.perS)} (on/off ${r2(ratio)}); ` +
      `CPU per message engine ${r3(med('on', engine))} vs ${r3(med('off', engine))} ms (+${r3(cost(engine))}), ` +
      `redis-server ${r3(med('on', redis))} vs ${r3(med('off', redis))} ms (+${r3(cost(redis))}); ` +
      `medians of ${pairs.length} round(s), load average ${loadRange}`
  const phaseRow = (p: PhaseFigures): Array<string | number> => [
    p.round, p.mode, p.messages, p.seconds, p.perS, r3(engine(p)), r3(redis(p)), r3(nats(p)),
    `${p.load[0].toFixed(2)} → ${p.load[1].toFixed(2)}`, p.newConnections,
    Object.entries(p.fromAddresses).sort().map(([a, n]) => `${a}: ${n}`).join(', '), p.ids.length - p.insecure,
    p.deferrals.length === 0 ? 0 : `${p.deferrals.length}: ${replies(p.deferrals)}`
  ]
  const l = run.limits
  return {
    name: 'egress',
    title: 'Egress shaping on and off: delivered/s and CPU per message to MX hosts',
    quick: run.quick,
    passed: failures.length === 0,
    summary,
    tables: [
      {
        title: 'Medians (per-round differences on − off, paired within a round)',
        columns: ['figure', 'shaping on', 'shaping off', 'on − off', 'on / off'],
        rows: pairs.length === 0
          ? []
          : [
              ['delivered/s', med('on', (p) => p.perS), med('off', (p) => p.perS), '', r2(ratio)],
              ['CPU ms per message: engine process', r3(med('on', engine)), r3(med('off', engine)), r3(cost(engine)), ''],
              ['CPU ms per message: redis-server', r3(med('on', redis)), r3(med('off', redis)), r3(cost(redis)), ''],
              ['CPU ms per message: engine + redis-server', r3(med('on', both)), r3(med('off', both)), r3(cost(both)), ''],
              ['CPU ms per message: nats-server (same work in both)', r3(med('on', nats)), r3(med('off', nats)), r3(cost(nats)), '']
            ]
      },
      {
        title: `Measured bursts: ${run.plan.messages} messages each after a ${run.plan.warm}-message warm-up, ` +
          'published while the engine delivers',
        columns: [
          'round', 'shaping', 'messages', 'seconds', 'delivered/s', 'CPU ms/msg engine', 'CPU ms/msg redis', 'CPU ms/msg nats',
          'load average (1 min)', 'new SMTP sessions', 'sent from (warm-up included)', 'over STARTTLS', 'deferred (warm-up included)'
        ],
        rows: run.phases.map(phaseRow)
      },
      {
        title: 'Checks',
        columns: ['check', 'value'],
        rows: [
          ['messages published (all phases)', run.phases.reduce((n, p) => n + p.ids.length, 0)],
          ['never at the sink', run.phases.reduce((n, p) => n + p.ids.filter((id) => !run.counts.has(id)).length, 0)],
          ['at the sink more than once', [...run.counts.values()].filter((n) => n > 1).length],
          [
            'deferred attempts (reported, not failed: the message was delivered on a later attempt)',
            run.phases.reduce((n, p) => n + p.deferrals.length, 0)
          ],
          ['failures', failures.length === 0 ? 'none' : failures.join('; ')]
        ]
      }
    ],
    charts: [{
      title: 'Delivered per second to MX hosts, egress shaping on and off',
      kind: 'bar',
      xLabel: 'round',
      yLabel: 'messages/s',
      x: pairs.map((x) => x.r),
      series: [{ name: 'shaping on', values: pairs.map((x) => x.on.perS) }, { name: 'shaping off', values: pairs.map((x) => x.off.perS) }]
    }],
    notes: [
      'One engine process (OB_ROLE=engine, 4 shards on 2 threads) at a time, restarted per phase with only OB_EGRESS_SHAPING ' +
        'changed; NATS, Redis, the DNS server, the sink (in the benchmark process), the organisation and its pool are shared. ' +
        'The order of the two modes alternates between rounds.',
      'Recipients cycle over three domains whose MX hosts (answered by a test DNS server, all at 127.0.0.1) are Google ' +
        '(aspmx.l.google.com), Microsoft 365 (*.mail.protection.outlook.com) and a site of its own: three providers, so with ' +
        'shaping on two sources × three providers = six lanes. The organisation\'s pool has two sources bound to 127.0.0.2 and ' +
        '127.0.0.3 (weight 50 each); with shaping off the pool is not used and mail leaves from the host\'s own address.',
      'The lanes\' limits are overridden out of reach (cp.egress.putLimits for google, microsoft and default): ' +
        `maxConnections ${l.maxConnections}, messagesPerConnection ${l.messagesPerConnection} (the engine's own pools use 100), ` +
        `messagesPerMinute ${l.messagesPerMinute}; and OB_SMTP_POOL_CONNECTIONS=100 in both modes. So neither the lane rate nor ` +
        'the connection slots nor a pool size limits delivery: the comparison shows what the layer costs, not what its ' +
        'limits do. No source has a warm-up. Google\'s lanes keep tls: required; the sink offers STARTTLS, and both modes use it.',
      'Load: the 5 KB receipt of the engine benchmark, untracked, DKIM-signed. The benchmark publishes to OB_OUTBOUND (as the ' +
        'gateway does) while the engine delivers, keeping at most 1000 messages between publish and sink, so the engine always ' +
        'has work and the queue never fills up ahead of it. delivered/s = messages / (first publish → last at the sink).',
      'CPU: user + system time of the engine process (all its threads) and of redis-server and nats-server from /proc/<pid>/stat ' +
        'over the measured burst, divided by the messages delivered. On − off is the layer\'s cost per message; it is taken ' +
        'within each round and its median reported. Figures move with the machine\'s load (given per burst); CPU per message ' +
        'much less than delivered/s.',
      `OB_DELIVERY_RETRY_SCHEDULE=${run.retrySchedule} in both modes: a recipient deferred by an SMTP error is tried again a ` +
        'second later instead of a minute, so a deferral shows in the table (with its reply) rather than stalling the burst.',
      'Checks: every message of every phase at the sink exactly once; with shaping on every message from a source of the ' +
        'pool and both sources used, with it off every message from 127.0.0.1. There is no speed target: the layer\'s cost is ' +
        'reported as measured.'
    ],
    failures,
    duration_s: Math.round((Date.now() - run.started) / 100) / 10
  }
}
