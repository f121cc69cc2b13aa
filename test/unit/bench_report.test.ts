import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync, readFileSync, existsSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseBenchArgs } from '../../bench/args.ts'
import { writeReport, fillReadme, loadResults } from '../../bench/report.ts'
import { BENCHMARKS } from '../../bench/registry.ts'
import type { BenchResult } from '../../bench/types.ts'

test('bench arguments: names, --quick and options for the benchmarks', () => {
  assert.deepEqual(parseBenchArgs([], ['a', 'b']), { names: ['a', 'b'], quick: false, args: {} })
  assert.deepEqual(parseBenchArgs(['b', '--quick', '--path=/v1/x=y'], ['a', 'b']), { names: ['b'], quick: true, args: { path: '/v1/x=y' } })
  assert.ok(BENCHMARKS.ratelimit !== undefined)
})

test('the report has a section, tables and one SVG per chart per result; README gets the summary between its markers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outbox-bench-'))
  const result: BenchResult = {
    name: 'demo', title: 'Demo', quick: false, passed: true, summary: '42 req/s', duration_s: 1,
    tables: [{ title: 'T', columns: ['a', 'b'], rows: [[1, 'x|y']] }],
    charts: [
      { title: 'C', kind: 'line', xLabel: 'connections', yLabel: 'req/s', x: [1, 8, 64], series: [{ name: 'p99', values: [1, 2, 3] }] }
    ],
    notes: ['n'], failures: [],
    machine: { cpus: 2, cpu_model: 'cpu', memory_gb: 4, os: 'Linux', node: 'v20', nats_server: '2.9.10', redis_server: '7.0.15' }
  }
  writeFileSync(join(dir, 'demo.json'), JSON.stringify(result))
  const report = writeReport(dir)
  assert.match(report, /## Demo \(`demo`\)/)
  assert.match(report, /\| 1 \| x\\\|y \|/)
  assert.match(report, /!\[C\]\(demo-1\.svg\)/)
  assert.ok(existsSync(join(dir, 'demo-1.svg')))
  const readme = join(dir, 'README.md')
  writeFileSync(readme, '# x\n<!-- bench:begin -->\nold\n<!-- bench:end -->\ntail\n')
  assert.equal(fillReadme(readme, loadResults(dir)), true)
  const text = readFileSync(readme, 'utf8')
  assert.match(text, /- \*\*demo\*\*: 42 req\/s \(2 cores/)
  assert.doesNotMatch(text, /old/)
  assert.match(text, /<!-- bench:end -->\ntail/)
  rmSync(dir, { recursive: true, force: true })
})

test('every benchmark is registered; the report states the load average and leaves out JSON of another shape', () => {
  for (const name of ['gateway', 'curve', 'engine', 'webhooks', 'inbound', 'ratelimit']) assert.ok(BENCHMARKS[name] !== undefined, name)
  const dir = mkdtempSync(join(tmpdir(), 'outbox-bench-'))
  const result: BenchResult = {
    name: 'demo', title: 'Demo', quick: false, passed: true, summary: '42 req/s', duration_s: 1,
    tables: [], charts: [], notes: [], failures: [],
    machine: { cpus: 2, cpu_model: 'cpu', memory_gb: 4, os: 'Linux', node: 'v20', nats_server: '2.9.10', redis_server: '7.0.15' },
    load_start: '3.10 2.00 1.50',
    load_end: '4.20 2.50 1.60'
  }
  writeFileSync(join(dir, 'demo.json'), JSON.stringify(result))
  writeFileSync(join(dir, 'old.json'), JSON.stringify({ benchmark: 'gateway', measurements: [] }))
  assert.deepEqual(loadResults(dir).map((r) => r.name), ['demo'])
  assert.match(writeReport(dir), /Load average \(1\/5\/15 min\) on these 2 cores: 3\.10 2\.00 1\.50 at the start, 4\.20 2\.50 1\.60 at the end\./)
  const readme = join(dir, 'README.md')
  writeFileSync(readme, '<!-- bench:begin -->\n<!-- bench:end -->\n')
  fillReadme(readme, loadResults(dir))
  assert.match(readFileSync(readme, 'utf8'), /\(2 cores, load average 3\.10 → 4\.20,/)
  rmSync(dir, { recursive: true, force: true })
})
