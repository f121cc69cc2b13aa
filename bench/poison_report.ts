import type { BenchResult } from './types.ts'

/** One timed burst: healthy messages delivered, how fast, and how many 451s the poison drew meanwhile. */
export interface RunFigures {
  healthy: number, poison: number, seconds: number, rate: number, p50_ms: number, p99_ms: number, deferrals: number
  /** CPU time of the engine, nats-server, redis-server and this process (publisher and sink) during the burst. */
  cpu_ms: number
  cpu_split_ms: { engine: number, nats: number, redis: number, bench: number }
}
export interface PoisonRound { alone: RunFigures, mixed: RunFigures }
export interface PoisonChecks {
  poisonAtSink: number
  duplicated: number
  /** Messages still in OB_OUTBOUND after waiting 90 s for the poison to run out (not waited for in quick mode). */
  stuck: number
  stillQueued: number
  /** Seconds from the end of each mixed burst until OB_OUTBOUND was empty. */
  drainS: number[]
  retrySchedule: string
}

const pct = (from: number, to: number): number => Math.round((to / from - 1) * 1000) / 10

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? 0 : s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/**
 * The poison benchmark's result: per round the healthy rate and latency alone and with poison, and the slowdown
 * (rate: how much lower; latency: how much higher). Only correctness fails the run (poison mail at the sink,
 * a duplicated healthy message); the slowdown is reported against its 10 % target, as every speed figure is.
 */
export function poisonReport (quick: boolean, started: number, rounds: PoisonRound[], checks: PoisonChecks): BenchResult {
  const slowdowns = rounds.map((r) => Math.round((1 - r.mixed.rate / r.alone.rate) * 1000) / 10)
  const p50Up = rounds.map((r) => pct(r.alone.p50_ms, r.mixed.p50_ms))
  const p99Up = rounds.map((r) => pct(r.alone.p99_ms, r.mixed.p99_ms))
  const slowdown = median(slowdowns)
  const failures: string[] = []
  if (checks.poisonAtSink > 0) failures.push(`${checks.poisonAtSink} poison message(s) reached the sink`)
  if (checks.duplicated > 0) failures.push(`${checks.duplicated} message(s) reached the sink more than once`)
  if (checks.stuck > 0) failures.push(`${checks.stuck} message(s) still in OB_OUTBOUND 90 s after their retry schedule`)
  const first = rounds[0]!
  const cpuUp = rounds.map((r) => pct(r.alone.cpu_ms, r.mixed.cpu_ms))
  const row = (label: string, f: RunFigures): Array<string | number> => [
    label, f.healthy, f.poison, f.deferrals, f.seconds, f.rate, f.p50_ms, f.p99_ms,
    `${f.cpu_ms} (${f.cpu_split_ms.engine} / ${f.cpu_split_ms.nats} / ${f.cpu_split_ms.redis} / ${f.cpu_split_ms.bench})`
  ]
  return {
    name: 'poison',
    title: 'Healthy mail alone and with mail to a destination that always answers 451',
    quick,
    passed: failures.length === 0,
    summary: `healthy mail ${slowdown} % slower with poison mixed in (median of ${rounds.length} round(s); target ≤ 10 %); ` +
      `latency p50 ${median(p50Up)} %, p99 ${median(p99Up)} %; CPU ${median(cpuUp)} %; ` +
      `${first.mixed.deferrals} deferrals during a ${first.mixed.seconds} s mixed burst`,
    tables: [
      {
        title: 'Healthy delivery alone and with poison mixed in (same engine, one run)',
        columns: [
          'run', 'healthy', 'poison mixed in', '451 answers meanwhile', 'seconds', 'healthy delivered/s', 'latency p50 ms',
          'latency p99 ms', 'CPU ms: all (engine / nats / redis / publisher + sink)'
        ],
        rows: rounds.flatMap((r, i) => [row(`round ${i + 1}: healthy alone`, r.alone), row(`round ${i + 1}: with poison`, r.mixed)])
      },
      {
        title: 'Slowdown of healthy mail caused by the poison',
        columns: ['round', 'delivery rate lower by', 'latency p50 higher by', 'latency p99 higher by', 'CPU higher by'],
        rows: [
          ...rounds.map((_r, i) => [i + 1, `${slowdowns[i]} %`, `${p50Up[i]} %`, `${p99Up[i]} %`, `${cpuUp[i]} %`]),
          ['median', `${slowdown} %`, `${median(p50Up)} %`, `${median(p99Up)} %`, `${median(cpuUp)} %`]
        ]
      },
      {
        title: 'Checks',
        columns: ['check', 'value'],
        rows: [
          ['poison messages at the sink', checks.poisonAtSink],
          ['messages at the sink more than once', checks.duplicated],
          [
            'seconds after each mixed burst until OB_OUTBOUND was empty (poison soft-bounced)',
            checks.drainS.join(', ') || 'not waited for (quick mode)'
          ],
          ['messages still in OB_OUTBOUND at the end', checks.stillQueued]
        ]
      }
    ],
    charts: [{
      title: 'Healthy delivered per second, alone and with poison',
      kind: 'bar',
      xLabel: 'round',
      yLabel: 'messages/s',
      x: rounds.map((_r, i) => i + 1),
      series: [
        { name: 'healthy alone', values: rounds.map((r) => r.alone.rate) },
        { name: 'with poison', values: rounds.map((r) => r.mixed.rate) }
      ]
    }],
    notes: [
      'Messages are published to OB_OUTBOUND as the gateway publishes them (Nats-Msg-Id = message id); one engine process ' +
        '(OB_ROLE=engine) delivers them to a relay sink in the benchmark process, which answers 451 at RCPT to every ' +
        '`tempfail…` recipient.',
      'Poison messages are spread evenly among the healthy ones of the mixed burst; ' +
        `OB_DELIVERY_RETRY_SCHEDULE=${checks.retrySchedule}, so every poison message is retried several times while the healthy ` +
        'burst is delivered ("451 answers meanwhile").',
      'Healthy and poison messages are published by two loops side by side, so the healthy ones go out at the same pace in both runs. ' +
        'Each mixed burst has a poison domain of its own, met for the first time.',
      'Rate: healthy messages / (last healthy at the sink − first publish). Latency: publish acknowledged → at the sink, per healthy ' +
        'message. CPU: user + system time of the engine, nats-server, redis-server and the benchmark process (publisher and sink) ' +
        'during the burst.',
      'After each mixed burst the benchmark waits until OB_OUTBOUND is empty (every poison message soft-bounced), so a baseline never ' +
        'runs while earlier poison is held or retried.'
    ],
    failures,
    duration_s: Math.round((Date.now() - started) / 100) / 10
  }
}
