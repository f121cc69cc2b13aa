import type { Chart } from './types.ts'

/** Small, dependency-free SVG line and grouped-bar charts for the benchmark report. */
const W = 640
const H = 340
const M = { top: 36, right: 150, bottom: 48, left: 64 }
const PLOT_W = W - M.left - M.right
const PLOT_H = H - M.top - M.bottom
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#be185d']

function esc (s: string | number): string {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** A round axis maximum at or above `v`: 1, 2, 2.5 or 5 times a power of ten. */
export function niceMax (v: number): number {
  if (!(v > 0)) return 1
  const p = 10 ** Math.floor(Math.log10(v))
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p
  return 10 * p
}

function fmt (v: number): string {
  if (Math.abs(v) >= 10_000) return `${Math.round(v / 1000)}k`
  if (Number.isInteger(v)) return String(v)
  return v.toFixed(Math.abs(v) < 1 ? 2 : 1)
}

function frame (chart: Chart, yMax: number): string[] {
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${M.left}" y="20" font-size="14" font-weight="bold">${esc(chart.title)}</text>`
  ]
  for (let i = 0; i <= 5; i++) {
    const v = (yMax * i) / 5
    const y = Math.round((M.top + PLOT_H - (PLOT_H * i) / 5) * 10) / 10
    out.push(`<line x1="${M.left}" y1="${y}" x2="${M.left + PLOT_W}" y2="${y}" stroke="#e5e7eb"/>`)
    out.push(`<text x="${M.left - 6}" y="${y + 4}" text-anchor="end">${fmt(v)}</text>`)
  }
  out.push(`<line x1="${M.left}" y1="${M.top + PLOT_H}" x2="${M.left + PLOT_W}" y2="${M.top + PLOT_H}" stroke="#111"/>`)
  out.push(`<text x="${M.left + PLOT_W / 2}" y="${H - 10}" text-anchor="middle">${esc(chart.xLabel)}</text>`)
  out.push(`<text transform="translate(16 ${M.top + PLOT_H / 2}) rotate(-90)" text-anchor="middle">${esc(chart.yLabel)}</text>`)
  chart.series.forEach((s, i) => {
    const y = M.top + 8 + i * 18
    out.push(`<rect x="${M.left + PLOT_W + 14}" y="${y - 8}" width="12" height="10" fill="${COLORS[i % COLORS.length]}"/>`)
    out.push(`<text x="${M.left + PLOT_W + 32}" y="${y + 1}">${esc(s.name)}</text>`)
  })
  return out
}

function xLabels (chart: Chart, xAt: (i: number) => number): string[] {
  const every = Math.max(1, Math.ceil(chart.x.length / 12))
  return chart.x
    .map((x, i) => i % every === 0 ? `<text x="${xAt(i)}" y="${M.top + PLOT_H + 16}" text-anchor="middle">${esc(x)}</text>` : '')
    .filter(Boolean)
}

export function lineChart (chart: Chart): string {
  const yMax = niceMax(Math.max(0, ...chart.series.flatMap((s) => s.values.filter(Number.isFinite))))
  const numeric = chart.x.every((x) => typeof x === 'number')
  const xs = chart.x.map(Number)
  const [x0, x1] = numeric ? [Math.min(...xs), Math.max(...xs)] : [0, chart.x.length - 1]
  const xAt = (i: number): number => M.left + (x1 === x0 ? PLOT_W / 2 : ((numeric ? xs[i]! : i) - x0) / (x1 - x0) * PLOT_W)
  const yAt = (v: number): number => M.top + PLOT_H - (v / yMax) * PLOT_H
  const out = frame(chart, yMax)
  out.push(...xLabels(chart, xAt))
  chart.series.forEach((s, si) => {
    const pts = s.values.map((v, i) => Number.isFinite(v) ? `${xAt(i).toFixed(1)},${yAt(v).toFixed(1)}` : '').filter(Boolean)
    const color = COLORS[si % COLORS.length]
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.join(' ')}"/>`)
    if (pts.length <= 24) for (const p of pts) out.push(`<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="3" fill="${color}"/>`)
  })
  out.push('</svg>')
  return out.join('\n') + '\n'
}

export function barChart (chart: Chart): string {
  const yMax = niceMax(Math.max(0, ...chart.series.flatMap((s) => s.values.filter(Number.isFinite))))
  const groupW = PLOT_W / Math.max(1, chart.x.length)
  const barW = (groupW * 0.8) / Math.max(1, chart.series.length)
  const xAt = (i: number): number => M.left + groupW * (i + 0.5)
  const out = frame(chart, yMax)
  out.push(...xLabels(chart, xAt))
  chart.series.forEach((s, si) => {
    s.values.forEach((v, i) => {
      if (!Number.isFinite(v)) return
      const h = (v / yMax) * PLOT_H
      const x = M.left + groupW * i + groupW * 0.1 + barW * si
      out.push(
        `<rect x="${x.toFixed(1)}" y="${(M.top + PLOT_H - h).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${h.toFixed(1)}" ` +
        `fill="${COLORS[si % COLORS.length]}"><title>${esc(s.name)}: ${fmt(v)}</title></rect>`
      )
    })
  })
  out.push('</svg>')
  return out.join('\n') + '\n'
}

export function renderChart (chart: Chart): string {
  return chart.kind === 'bar' ? barChart(chart) : lineChart(chart)
}
