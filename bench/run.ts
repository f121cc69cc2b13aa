import { mkdirSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ServerProcess } from '../test/helpers/servers.ts'
import { BENCHMARKS } from './registry.ts'
import { ProgressBar } from './progress.ts'
import { describeMachine } from './machine.ts'
import { writeReport, fillReadme, loadResults } from './report.ts'
import { parseBenchArgs } from './args.ts'
import type { BenchResult } from './types.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const USAGE = `usage: npm run bench -- [name…] [--quick] [--name=value…]   benchmarks: ${Object.keys(BENCHMARKS).join(', ')}`

/** The 1, 5 and 15 minute load averages, e.g. "2.41 3.10 3.95": how busy the machine was besides us. */
function loadAverage (): string {
  return loadavg().map((l) => l.toFixed(2)).join(' ')
}

/**
 * `npm run bench -- [name…] [--quick]`: runs the named benchmarks (all by default) against a NATS and a Redis
 * of its own, writes bench/results/<name>.json, REPORT.md and the SVG charts, and exits 1 when a check failed.
 * Quick results go to bench/results/quick/ so that CI never overwrites the recorded figures.
 */
async function main (): Promise<number> {
  const argv = process.argv.slice(2)
  // The quick run of everything is CI's smoke check and must stay short (about two minutes on 2 cores): the soak and e2e
  // are run by name only.
  const defaults = Object.keys(BENCHMARKS).filter((n) => !(argv.includes('--quick') && BENCHMARKS[n]!.byNameInQuick === true))
  const { names, quick, args } = parseBenchArgs(argv, defaults)
  if (args.help !== undefined) { process.stdout.write(USAGE + '\n'); return 0 }
  const unknown = names.filter((n) => BENCHMARKS[n] === undefined)
  if (unknown.length > 0) { process.stderr.write(`unknown benchmark: ${unknown.join(', ')}\n${USAGE}\n`); return 2 }
  const dir = join(ROOT, 'bench', 'results', ...(quick ? ['quick'] : []))
  mkdirSync(dir, { recursive: true })
  const [nats, redis] = await Promise.all([ServerProcess.nats(), ServerProcess.redis()])
  const started = Date.now()
  let failed = 0
  try {
    const machine = await describeMachine(nats.url, redis.url)
    process.stderr.write(
      `bench: ${machine.cpus} × ${machine.cpu_model}, Node ${machine.node}, nats-server ${machine.nats_server}, ` +
      `redis-server ${machine.redis_server}${quick ? ', quick mode' : ''}\n`
    )
    for (const [i, name] of names.entries()) {
      const bar = new ProgressBar(`[${i + 1}/${names.length}] ${name}`)
      const t0 = Date.now()
      const loadStart = loadAverage()
      let result: BenchResult
      try {
        result = await BENCHMARKS[name]!.run({
          quick, natsUrl: nats.url, redisUrl: redis.url, args, progress: (f, label) => bar.update(f, label)
        })
      } catch (err) {
        result = {
          name,
          title: BENCHMARKS[name]!.title,
          quick,
          passed: false,
          summary: `crashed: ${(err as Error).message}`,
          tables: [],
          charts: [],
          notes: [],
          failures: [String((err as Error).stack ?? err)],
          duration_s: 0
        }
      }
      bar.done(result.passed ? 'done' : 'FAILED')
      result.duration_s = Math.round((Date.now() - t0) / 100) / 10
      result.machine = machine
      result.finished_at = new Date().toISOString()
      result.load_start = loadStart
      result.load_end = loadAverage()
      writeFileSync(join(dir, `${name}.json`), JSON.stringify(result, null, 2) + '\n')
      process.stderr.write(`${result.passed ? 'PASS' : 'FAIL'} ${name}: ${result.summary}\n`)
      for (const f of result.failures) process.stderr.write(`  - ${f}\n`)
      if (!result.passed) failed++
    }
  } finally {
    await Promise.all([nats.dispose(), redis.dispose()])
  }
  writeReport(dir)
  if (!quick) fillReadme(join(ROOT, 'README.md'), loadResults(dir))
  const seconds = Math.round((Date.now() - started) / 1000)
  process.stderr.write(`bench: ${names.length} benchmark(s) in ${seconds} s; report: ${join(dir, 'REPORT.md')}\n`)
  return failed > 0 ? 1 : 0
}

main().then((code) => process.exit(code), (err: unknown) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
})
