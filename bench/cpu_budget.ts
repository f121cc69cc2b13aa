import { createHash, generateKeyPairSync, sign } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { bodyMaker, SENDERS } from './e2e.ts'
import { bookFailures } from './e2e_accounting.ts'
import { runPhase, type Phase } from './e2e_phase.ts'
import { startE2eWorld } from './e2e_world.ts'
import { attribute, emptyAttribution, type Attribution, type CpuProfile, type Window } from './cpu_profile.ts'
import { budgetReport, type ProfileFile } from './cpu_budget_report.ts'
import { splitThreadCpu, threadCpuUs } from './thread_cpu.ts'
import type { BenchOptions, BenchResult } from './types.ts'

/**
 * Where Outbox's CPU goes per delivered message, stage by stage (bench/cpu_stages.ts names the stages and the
 * code of each). The end-to-end world (bench/e2e_world.ts) runs with `--cpu-prof`: every thread of Outbox writes
 * a V8 profile when the process exits. After a warm-up, one loaded phase (64 senders, unbounded, the e2e bench's
 * message) runs to the end: every accepted message at the sink with its webhook. Its start and end are taken with
 * process.hrtime, the profiles' own clock, and only samples inside that window count. Each stage's share of the
 * profiled (non-idle) time, times the profiled threads' CPU per delivered message from /proc/<pid>/task over the
 * same phase, is the stage's CPU per message; Outbox's other threads (V8's background threads, libuv's pool) are
 * reported beside the stages. The two DKIM signatures run in one function; their time is split by the cost of
 * each algorithm measured in this process right after the run.
 *
 * `--messages=N` sets the loaded phase's length (default 10,000; 2,000 in quick mode); `--profile=DIR` keeps the
 * profiles there (for Chrome DevTools or any `.cpuprofile` viewer; profiles of an earlier run there are removed
 * first) instead of a temporary directory removed at the end.
 */
const FULL = { messages: 10_000, warmup: 2000, dkimRounds: 300 }
const QUICK = { messages: 2000, warmup: 300, dkimRounds: 60 }

/** Slack when checking that the profiles' clock is process.hrtime's: a profile starts and ends inside the process's life. */
const CLOCK_SLACK_US = 2_000_000

const nowUs = (): number => Number(process.hrtime.bigint() / 1000n)
const loadAverage = (): string => loadavg().map((l) => l.toFixed(2)).join(' ')

/**
 * CPU µs of one RSA-2048 and one ed25519 DKIM `sign()` as dkim.ts makes them (RSA over the canonical header,
 * ed25519 over its SHA-256), over the same 700-byte header: what splits the profile's DKIM signing time.
 */
export function dkimSignCosts (rounds: number): { rsaUs: number, ed25519Us: number } {
  const header = Buffer.from(
    `from:Acme <orders@example.com>\r\nto:customer@dest.example\r\n${'x-pad:'.padEnd(600, 'a')}\r\ndkim-signature:v=1; a=rsa-sha256; b=`
  )
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey
  const ed = generateKeyPairSync('ed25519').privateKey
  const time = (f: () => void): number => {
    for (let i = 0; i < 10; i++) f()
    const c0 = process.cpuUsage()
    for (let i = 0; i < rounds; i++) f()
    const c = process.cpuUsage(c0)
    return (c.user + c.system) / rounds
  }
  return {
    rsaUs: time(() => sign('sha256', header, rsa)),
    ed25519Us: time(() => sign(null, createHash('sha256').update(header).digest(), ed))
  }
}

/** Every profile in `dir`, attributed over `window`; the thread is the file name's thread number (0: main). */
function readProfiles (
  dir: string, window: Window | undefined, life: Window
): { all: Attribution, files: ProfileFile[], clockOk: boolean } {
  const all = emptyAttribution()
  const files: ProfileFile[] = []
  let clockOk = true
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
    const profile = JSON.parse(readFileSync(join(dir, name), 'utf8')) as CpuProfile
    if (profile.startTime < life.fromUs - CLOCK_SLACK_US || profile.endTime > life.toUs + CLOCK_SLACK_US) clockOk = false
    const own = attribute(profile, window)
    attribute(profile, window, all)
    const thread = Number(/\.(\d+)\.\d+\.cpuprofile$/.exec(name)?.[1] ?? -1)
    files.push({ name, thread, busyUs: own.busyUs, wallUs: own.wallUs, idleUs: own.idleUs })
  }
  return { all, files, clockOk }
}

export async function runCpuBudgetBench (opts: BenchOptions): Promise<BenchResult> {
  const base = opts.quick ? QUICK : FULL
  const asked = Number(opts.args.messages)
  const plan = { ...base, messages: Number.isInteger(asked) && asked > 0 ? asked : base.messages }
  const started = Date.now()
  const kept = opts.args.profile !== undefined ? resolve(opts.args.profile) : undefined
  if (kept !== undefined) {
    mkdirSync(kept, { recursive: true })
    // every profile in the directory is read as this run's
    for (const f of readdirSync(kept).filter((n) => n.endsWith('.cpuprofile'))) rmSync(join(kept, f))
  }
  const profileDir = kept ?? mkdtempSync(join(tmpdir(), 'outbox-cpu-budget-'))
  try {
    opts.progress(0, 'starting NATS, Redis, sink, receiver and outbox start --cpu-prof')
    const bornUs = nowUs()
    const nodeFlags = opts.args['node-flags']?.split(' ').filter((f) => f !== '')
    const w = await startE2eWorld({ profileDir, ...(nodeFlags !== undefined ? { nodeFlags } : {}) })
    const failures: string[] = []
    let phase: Phase | undefined
    let window: Window | undefined
    const outboxPid = w.outbox.pid!
    let threadsBefore = new Map<number, number>()
    let threadsAfter = new Map<number, number>()
    try {
      const body = bodyMaker(w.domain)
      await runPhase(w, 'warm-up', { count: plan.warmup, concurrency: SENDERS }, body, (f) => opts.progress(0.05 + 0.15 * f, 'warm-up'))
      threadsBefore = threadCpuUs(outboxPid)
      const fromUs = nowUs()
      phase = await runPhase(
        w, `${SENDERS} senders, unbounded`, { count: plan.messages, concurrency: SENDERS }, body,
        (f) => opts.progress(0.2 + 0.65 * f, `${plan.messages} sends at ${SENDERS} senders`)
      )
      window = { fromUs, toUs: nowUs() }
      threadsAfter = threadCpuUs(outboxPid)
      failures.push(...bookFailures(phase.books))
      if (w.outbox.exitCode !== null || w.outbox.signalCode !== null) failures.push('outbox start exited during the run')
    } finally {
      opts.progress(0.86, 'stopping Outbox; its threads write their profiles')
      await w.close()
    }
    if (phase === undefined || window === undefined) throw new Error('the loaded phase did not run')
    const life = { fromUs: bornUs, toUs: nowUs() }
    opts.progress(0.9, 'reading the profiles')
    const checked = readProfiles(profileDir, undefined, life)
    // Should the profiles' clock not be process.hrtime's, the window would cut at random: whole profiles instead.
    const { all, files } = checked.clockOk ? readProfiles(profileDir, window, life) : checked
    if (files.length === 0) failures.push('Outbox wrote no .cpuprofile')
    opts.progress(0.95, 'timing the two DKIM signatures')
    const dkim = dkimSignCosts(plan.dkimRounds)
    return budgetReport({
      quick: opts.quick,
      started,
      messages: plan.messages,
      phase,
      attribution: all,
      files,
      clockOk: checked.clockOk,
      windowS: (window.toUs - window.fromUs) / 1e6,
      threads: splitThreadCpu(outboxPid, threadsBefore, threadsAfter, Math.max(0, files.length - 1)),
      dkim,
      loadAverage: { start: phase.loadAverage.start, end: loadAverage() },
      failures
    })
  } finally {
    if (kept === undefined) rmSync(profileDir, { recursive: true, force: true })
  }
}
