/**
 * What a large suppression import costs sends. The Outbox gateway (OB_ROLE=gateway) runs in a child process; this
 * process sends POST /v1/messages/send at a fixed rate with autocannon, once alone and once while
 * POST /v1/suppressions/import of 100,000 addresses (CSV) runs, one import after another for the whole
 * measurement, and compares the send accept latency (p50, p99) of the two. It also times each import.
 *
 *   npm run bench -- suppression_import            two measurements of 15 s, 100,000 addresses an import
 *   npm run bench -- suppression_import --quick    4 s, 20,000 addresses
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { pino } from 'pino'
import { fetch } from 'undici'
import { loadConfig } from '../config/mod.ts'
import { startOutbox } from '../cli/outbox_process.ts'
import { createOrganization, buildApiKey } from '../gateway/control/orgs.ts'
import type { BenchOptions, BenchResult } from './types.ts'

const QUICK = { durationS: 4, addresses: 20_000 }
const FULL = { durationS: 15, addresses: 100_000 }
/** Sends a second and connections: a steady load that leaves room on 2 cores, so latency says what the import costs. */
const SEND_RATE = 400
const CONNECTIONS = 20
/** The p99 during the import may be at most this much above the p99 alone (ms), and at most this many times it. */
const P99_SLACK_MS = 25
const P99_FACTOR = 3

interface Child { proc: ChildProcess, port: number, sendKey: string, manageKey: string, domain: string }

async function serveGateway (natsUrl: string, redisUrl: string): Promise<void> {
  const config = loadConfig({
    NATS_URL: natsUrl,
    REDIS_URL: redisUrl,
    OB_ROLE: 'gateway',
    OB_HTTP_PORT: '0',
    OB_SMTP_SUBMISSION_PORT: '0',
    OB_LOG_LEVEL: 'silent',
    OB_DOMAIN_VERIFICATION: 'off'
  })
  const proc = await startOutbox(config, pino({ level: 'silent' }))
  const domain = 'bench-import.test'
  const created = await createOrganization(proc.cp, config, { name: domain, domain, plan: 'enterprise' })
  const org = proc.cp.orgs.get(created.organization_id)!
  await proc.cp.orgs.put(org.id, { ...org, rate_limit_per_minute: 10_000_000 })
  const key = (permissions: Array<'send' | 'manage'>): ReturnType<typeof buildApiKey> =>
    buildApiKey({ orgId: org.id, domainId: created.domain_id, name: 'bench', permissions, environment: 'live' })
  const send = key(['send'])
  const manage = key(['manage'])
  await proc.cp.apiKeys.put(send.record.id, send.record)
  await proc.cp.apiKeys.put(manage.record.id, manage.record)
  process.stdout.write(JSON.stringify({ port: proc.gateway!.port, sendKey: send.value, manageKey: manage.value, domain }) + '\n')
  process.once('SIGTERM', () => {
    setTimeout(() => process.exit(0), 3000).unref()
    void proc.stop().finally(() => process.exit(0))
  })
}

async function startChild (natsUrl: string, redisUrl: string): Promise<Child> {
  // BENCH_NODE_ARGS (e.g. "--cpu-prof") goes to the gateway process only, for profiling it
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
  const proc = spawn(process.execPath, [...nodeArgs, fileURLToPath(import.meta.url), '--serve'], {
    env: { ...process.env, BENCH_NATS_URL: natsUrl, BENCH_REDIS_URL: redisUrl },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: proc.stdout! })
    rl.once('line', (l) => { rl.close(); resolve(l) })
    proc.once('exit', (code) => reject(new Error(`gateway exited with ${code}`)))
  })
  return { proc, ...(JSON.parse(line) as Omit<Child, 'proc'>) }
}

async function sends (c: Child, durationS: number): Promise<autocannon.Result> {
  return await autocannon({
    url: `http://127.0.0.1:${c.port}/v1/messages/send`,
    method: 'POST',
    connections: CONNECTIONS,
    overallRate: SEND_RATE,
    duration: durationS,
    headers: { authorization: `Bearer ${c.sendKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from: `Acme <orders@${c.domain}>`, to: 'customer@example.net', subject: 'Your order', text: 'On its way.' })
  })
}

function importCsv (round: number, n: number): string {
  const lines = ['email,reason']
  for (let i = 0; i < n; i++) lines.push(`r${round}.user${i}@list${i % 1000}.example,${i % 3 === 0 ? 'unsubscribe' : 'manual'}`)
  return lines.join('\n') + '\n'
}

/**
 * Imports one after another until `stop` resolves or the bodies run out; the duration (ms) of each that finished
 * and its report. The bodies are built before the measurement: building one (100,000 lines) in this process, which
 * also runs the load generator, held autocannon's event loop for tens of milliseconds, which it counted as the
 * gateway's latency.
 */
async function importsUntil (
  c: Child, bodies: readonly Buffer[], stop: Promise<unknown>
): Promise<Array<{ ms: number, imported: number }>> {
  let stopped = false
  void stop.then(() => { stopped = true })
  const done: Array<{ ms: number, imported: number }> = []
  for (const body of bodies) {
    if (stopped) break
    const t0 = performance.now()
    const res = await fetch(`http://127.0.0.1:${c.port}/v1/suppressions/import`, {
      method: 'POST', headers: { authorization: `Bearer ${c.manageKey}`, 'content-type': 'text/csv' }, body
    })
    const report = await res.json() as { imported?: number }
    if (res.status !== 200) throw new Error(`import answered ${res.status}: ${JSON.stringify(report)}`)
    done.push({ ms: Math.round(performance.now() - t0), imported: report.imported ?? 0 })
  }
  return done
}

export async function runSuppressionImportBench (opts: BenchOptions): Promise<BenchResult> {
  const p = opts.quick ? QUICK : FULL
  const child = await startChild(opts.natsUrl, opts.redisUrl)
  try {
    opts.progress(0.05, 'warm-up')
    await sends(child, 2)
    opts.progress(0.1, 'sends alone')
    const alone = await sends(child, p.durationS)
    // more bodies than imports can finish in the measurement (the fastest seen took 4 s for 100,000 addresses)
    const bodies = Array.from({ length: Math.ceil(p.durationS / 2) }, (_, round) => Buffer.from(importCsv(round, p.addresses)))
    opts.progress(0.5, 'sends during imports')
    const during = sends(child, p.durationS)
    const imports = await importsUntil(child, bodies, during)
    const withImport = await during
    const figures = (r: autocannon.Result): Array<string | number> =>
      [r.requests.average, r.latency.p50, r.latency.p99, r.latency.max, r.non2xx + r.errors]
    const importMs = imports.map((i) => i.ms)
    const failures: string[] = []
    if (imports.length === 0) failures.push('no import finished within the measurement')
    if (imports.some((i) => i.imported !== p.addresses)) failures.push(`an import added fewer than ${p.addresses} addresses`)
    if (withImport.latency.p99 > Math.max(alone.latency.p99 * P99_FACTOR, alone.latency.p99 + P99_SLACK_MS)) {
      failures.push(`send p99 ${withImport.latency.p99} ms during imports against ${alone.latency.p99} ms alone`)
    }
    if (withImport.non2xx + withImport.errors > 0) failures.push('sends failed during imports')
    const importS = importMs.length === 0 ? NaN : Math.round(importMs.reduce((a, b) => a + b, 0) / importMs.length) / 1000
    return {
      name: 'suppression_import',
      title: 'Send accept latency with and without a 100,000-address suppression import',
      quick: opts.quick,
      passed: failures.length === 0,
      summary: `send p99 ${alone.latency.p99} ms alone, ${withImport.latency.p99} ms during imports of ${p.addresses} addresses ` +
        `(${importS} s an import, ${imports.length} done)`,
      tables: [
        {
          title: `POST /v1/messages/send at ${SEND_RATE}/s over ${CONNECTIONS} connections, ${p.durationS} s each`,
          columns: ['run', 'sends/s', 'p50 ms', 'p99 ms', 'max ms', 'failed'],
          rows: [['alone', ...figures(alone)], [`during imports of ${p.addresses}`, ...figures(withImport)]]
        },
        {
          title: `POST /v1/suppressions/import of ${p.addresses} addresses (CSV), one after another during the second run`,
          columns: ['import', 'ms', 'addresses added'],
          rows: imports.map((i, n) => [n + 1, i.ms, i.imported])
        }
      ],
      charts: [],
      notes: [
        'The gateway runs alone (OB_ROLE=gateway) in a child process with its own NATS and Redis; the load generator and the ' +
        'import client run in this process, every import body built before the measurement starts. The gateway reads and ' +
        'checks each import on a thread of its own, then writes its addresses to NATS KV with 32 writes in flight.'
      ],
      failures,
      duration_s: 0
    }
  } finally {
    if (child.proc.exitCode === null) {
      await new Promise<void>((resolve) => { child.proc.once('exit', () => resolve()); child.proc.kill('SIGTERM') })
    }
  }
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]
if (isMain && process.argv.includes('--serve')) await serveGateway(process.env.BENCH_NATS_URL!, process.env.BENCH_REDIS_URL!)
