import { DKIM_SIGN, STAGES } from './cpu_stages.ts'
import { topFunctions, type Attribution } from './cpu_profile.ts'
import type { Phase } from './e2e_phase.ts'
import type { BenchResult, Table } from './types.ts'

/** One thread's profile: the file, the thread number in its name (0: the main thread), its busy and idle time in the window. */
export interface ProfileFile { name: string, thread: number, busyUs: number, wallUs: number, idleUs: number }

export interface BudgetInput {
  quick: boolean
  started: number
  messages: number
  phase: Phase
  attribution: Attribution
  files: ProfileFile[]
  /** Whether every profile lay inside Outbox's life on the process.hrtime clock (else whole profiles were read). */
  clockOk: boolean
  windowS: number
  /** Outbox's CPU over the phase by thread (/proc/<pid>/task): main, the profiled worker threads, all others. */
  threads: { mainUs: number, workersUs: number[], restUs: number, threads: number }
  /** CPU µs of one sign() of each DKIM algorithm, measured in the bench process. */
  dkim: { rsaUs: number, ed25519Us: number }
  loadAverage: { start: string, end: string }
  failures: string[]
}

export interface BudgetRow { stage: string, us: number }

const RSA_ROW = 'DKIM: RSA-2048 signature'
const ED25519_ROW = 'DKIM: ed25519 signature'

/**
 * Profiled time per stage in budget order, DKIM's sign() split into its two signatures by their measured costs
 * (every message is signed with both keys, so each gets its algorithm's part of every signing).
 */
export function budgetRows (a: Attribution, dkim: BudgetInput['dkim']): BudgetRow[] {
  const rows: BudgetRow[] = []
  for (const stage of STAGES) {
    const us = a.stages.get(stage) ?? 0
    if (stage !== DKIM_SIGN) { rows.push({ stage, us }); continue }
    const rsaPart = dkim.rsaUs / Math.max(1e-9, dkim.rsaUs + dkim.ed25519Us)
    const rsaUs = us * rsaPart
    rows.push({ stage: RSA_ROW, us: rsaUs }, { stage: ED25519_ROW, us: us - rsaUs })
  }
  return rows
}

const pct = (part: number, whole: number): string => whole > 0 ? `${(100 * part / whole).toFixed(1)} %` : '–'
const ms = (us: number, digits = 3): string => (us / 1000).toFixed(digits)

export function budgetReport (i: BudgetInput): BenchResult {
  const { phase, attribution: a } = i
  const delivered = Math.max(0, phase.books.accepted - phase.books.lost)
  const per = (us: number): number => delivered > 0 ? us / delivered : 0
  const outboxPerMsg = per(phase.cpuUs.outbox)
  const busy = a.busyUs
  // The profiled threads' CPU from /proc; the rest of Outbox's CPU (background threads) is no stage's. Without a
  // per-thread reading (the tasks were gone), the shares apply to the whole process.
  const t = i.threads
  const jsUs = t.mainUs + t.workersUs.reduce((s, us) => s + us, 0)
  const split = jsUs > 0 && t.mainUs > 0
  const profiledPerMsg = split ? per(jsUs) : outboxPerMsg
  const backgroundPerMsg = split ? Math.max(0, outboxPerMsg - profiledPerMsg) : 0
  // a stage's CPU per message: its share of the profiled time times the profiled threads' /proc CPU per message
  const perMsgOf = (us: number): number => busy > 0 ? (us / busy) * profiledPerMsg : 0
  const rows = budgetRows(a, i.dkim)
  const budget: Table = {
    title: `CPU budget per delivered message, by stage (${delivered} messages, ${phase.label})`,
    columns: ['stage', 'share of profiled Outbox CPU', 'ms per delivered message', 'profiled s in the phase'],
    rows: [
      ...rows.map((r) => [r.stage, pct(r.us, busy), ms(perMsgOf(r.us)), (r.us / 1e6).toFixed(2)]),
      ['total of the profiled threads', '100 %', ms(profiledPerMsg), (busy / 1e6).toFixed(2)],
      ['Outbox\'s other threads, not in the profiles (V8 background GC and compilers, libuv\'s pool: gzip)', '–',
        ms(backgroundPerMsg), '–'],
      ['Outbox, every thread (/proc)', '–', ms(outboxPerMsg), '–']
    ]
  }
  const phaseTable: Table = {
    title: 'The loaded phase',
    columns: ['what', 'value'],
    rows: [
      ['messages sent / accepted / delivered', `${i.messages} / ${phase.books.accepted} / ${delivered}`],
      ['phase (first send → every message at the sink with its webhook)', `${i.windowS.toFixed(1)} s`],
      ['delivered per second', phase.deliveredPerS],
      ['Outbox CPU per delivered message (/proc, every thread)', `${ms(outboxPerMsg)} ms`],
      ['… of which the profiled threads (/proc/<pid>/task: main ' +
        `${(t.mainUs / 1e6).toFixed(1)} s, workers ${t.workersUs.map((us) => (us / 1e6).toFixed(1)).join(' + ')} s)`,
      split ? `${ms(profiledPerMsg)} ms (${pct(jsUs, phase.cpuUs.outbox)})` : 'not read'],
      [`… and its ${Math.max(0, t.threads - 1 - t.workersUs.length)} other threads (V8 background GC and compilers, libuv's pool)`,
        split ? `${ms(backgroundPerMsg)} ms` : 'not read'],
      ['non-idle profile time per message: samples capped at 1.5 intervals / uncapped (on the CPU or waiting for a core)',
        `${ms(per(busy))} / ${ms(per(a.wallUs))} ms`],
      ['nats-server CPU per delivered message', `${ms(per(phase.cpuUs.nats))} ms`],
      ['redis-server CPU per delivered message', `${ms(per(phase.cpuUs.redis))} ms`],
      ['SMTP sink / webhook receiver / load generator CPU per message',
        `${ms(per(phase.cpuUs.sink))} / ${ms(per(phase.cpuUs.receiver))} / ${ms(per(phase.cpuUs.load_generator))} ms`],
      ['threads profiled', `${i.files.length} (${i.files.map((f) => f.thread === 0 ? 'main' : `worker ${f.thread}`).join(', ')})`],
      ['DKIM sign() cost measured beside the run: RSA-2048 / ed25519', `${i.dkim.rsaUs.toFixed(0)} / ${i.dkim.ed25519Us.toFixed(0)} µs`],
      ['load average (1/5/15 min) at the phase start / end', `${i.loadAverage.start} / ${i.loadAverage.end}`]
    ]
  }
  const top: Table = {
    title: 'Top 15 functions by self time, with their stage',
    columns: ['#', 'function', 'where', 'stage (most of its time)', 'share of profiled Outbox CPU', 'ms per delivered message'],
    rows: topFunctions(a, 15).map((f, k) => [k + 1, f.functionName, f.where, f.stage, pct(f.selfUs, busy), ms(perMsgOf(f.selfUs))])
  }
  const threads: Table = {
    title: 'Profiles (one per thread), inside the phase',
    columns: ['file', 'thread', 'on CPU s (capped samples)', 'busy s (uncapped: on CPU or waiting for a core)', 'idle s'],
    rows: i.files.map((f) => [
      f.name, f.thread === 0 ? 'main' : `worker ${f.thread}`,
      (f.busyUs / 1e6).toFixed(2), (f.wallUs / 1e6).toFixed(2), (f.idleUs / 1e6).toFixed(2)
    ])
  }
  const largest = [...rows].sort((x, y) => y.us - x.us).slice(0, 3).map((r) => `${r.stage} ${pct(r.us, busy)}`).join(', ')
  return {
    name: 'cpu_budget',
    title: 'CPU budget per stage of the delivery path, from CPU profiles of a loaded run',
    quick: i.quick,
    passed: i.failures.length === 0,
    summary: `Outbox ${ms(outboxPerMsg, 2)} ms CPU per delivered message (/proc); largest stages: ${largest}`,
    tables: [budget, phaseTable, top, threads],
    charts: [],
    notes: [
      'Each thread of `outbox start` (the main thread and every worker thread) was profiled with `node --cpu-prof`; samples ' +
      'between the loaded phase\'s start and end (process.hrtime) count, `(idle)` samples are dropped, each sample weighs the ' +
      'time until the next, at most 1.5 sampling intervals (V8 samples on the wall clock; a gap is a thread off the CPU). ' +
      'A sample belongs to the stage of the first Outbox frame from its leaf (bench/cpu_stages.ts, one row per stage); a ' +
      'stack without one goes by its library or V8 pseudo-frame.',
      i.clockOk
        ? 'Clock check passed: every profile started and ended inside Outbox\'s life as process.hrtime saw it, so the phase ' +
          'window cuts the profiles.'
        : 'Clock check FAILED: a profile lay outside Outbox\'s life on process.hrtime; whole profiles (start-up and shutdown ' +
          'included) were read.',
      'Shares are what to compare between runs: ms per message is the share times the profiled threads\' CPU per message ' +
        'from /proc/<pid>/task, which moves with the machine\'s load.',
      'Both DKIM signatures run in one function: their sign() time is split by the costs in the phase table.'
    ],
    failures: i.failures,
    duration_s: Math.round((Date.now() - i.started) / 100) / 10
  }
}
