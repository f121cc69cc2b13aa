import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import type { BenchResult, Table } from './types.ts'
import { renderChart } from './svg_chart.ts'

function table (t: Table): string[] {
  return [
    `**${t.title}**`,
    '',
    `| ${t.columns.join(' | ')} |`,
    `|${t.columns.map(() => '---').join('|')}|`,
    ...t.rows.map((r) => `| ${r.map((c) => String(c).replace(/\|/g, '\\|')).join(' | ')} |`),
    ''
  ]
}

export function loadResults (dir: string): BenchResult[] {
  if (!existsSync(dir)) return []
  // Files of another shape (older standalone runs) are not harness results and are left out of the report.
  return readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as BenchResult)
    .filter((r) => typeof r.name === 'string' && Array.isArray(r.tables) && Array.isArray(r.charts))
}

/** Writes REPORT.md and one SVG per chart for every result in `dir`. */
export function writeReport (dir: string): string {
  const results = loadResults(dir)
  const out = ['# Outbox benchmark report', '', '<!-- Written by `npm run bench`; rerun to refresh. -->', '']
  for (const r of results) {
    const m = r.machine
    out.push(`## ${r.title} (\`${r.name}\`)`, '')
    out.push(`${r.passed ? 'PASS' : 'FAIL'}: ${r.summary}`, '')
    if (m !== undefined) {
      out.push(
        `Measured ${r.finished_at ?? ''}${r.quick ? ' (quick mode)' : ''} in ${r.duration_s} s on ${m.cpus} × ${m.cpu_model}, ` +
        `${m.memory_gb} GB, ${m.os}, Node ${m.node}, nats-server ${m.nats_server}, redis-server ${m.redis_server}.`,
        ''
      )
      if (r.load_start !== undefined) {
        out.push(`Load average (1/5/15 min) on these ${m.cpus} cores: ${r.load_start} at the start, ${r.load_end ?? '?'} at the end.`, '')
      }
    }
    for (const t of r.tables) out.push(...table(t))
    r.charts.forEach((c, i) => {
      const file = `${r.name}-${i + 1}.svg`
      writeFileSync(join(dir, file), renderChart(c))
      out.push(`![${c.title}](${file})`, '')
    })
    if (r.failures.length > 0) out.push('Failures:', '', ...r.failures.map((f) => `- ${f}`), '')
    if (r.notes.length > 0) out.push('Notes:', '', ...r.notes.map((n) => `- ${n}`), '')
  }
  const text = out.join('\n')
  writeFileSync(join(dir, 'REPORT.md'), text)
  return text
}

const BEGIN = '<!-- bench:begin -->'
const END = '<!-- bench:end -->'

/** Replaces README's Performance placeholder with one line per benchmark and a link to the full report. */
export function fillReadme (readmePath: string, results: BenchResult[]): boolean {
  if (!existsSync(readmePath)) return false
  const readme = readFileSync(readmePath, 'utf8')
  const a = readme.indexOf(BEGIN)
  const b = readme.indexOf(END)
  if (a < 0 || b < a) return false
  const lines = ['', ...results.map((r) => {
    const m = r.machine
    const load = r.load_start === undefined ? '' : `, load average ${r.load_start.split(' ')[0]} → ${(r.load_end ?? '?').split(' ')[0]}`
    const where = m === undefined ? '' : ` (${m.cpus} cores${load}, Node ${m.node}, NATS ${m.nats_server}, Redis ${m.redis_server})`
    return `- **${r.name}**: ${r.summary}${where}`
  }), '', 'Full tables and charts: [bench/results/REPORT.md](bench/results/REPORT.md).', '']
  writeFileSync(readmePath, readme.slice(0, a + BEGIN.length) + lines.join('\n') + readme.slice(b))
  return true
}
