import { h, svg } from './dom.ts'

export interface Series { name: string, color: string, values: number[] }

const W = 760
const H = 260
const PAD = { left: 44, right: 12, top: 12, bottom: 34 }

// Set through CSSOM rather than a style attribute: no markup is built from strings anywhere in the dashboard.
function swatch (color: string): HTMLElement {
  const el = h('span', { class: 'swatch' })
  el.style.background = color
  return el
}

function niceMax (n: number): number {
  if (n <= 4) return 4
  const p = 10 ** Math.floor(Math.log10(n))
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((m) => m >= n)!
}

/** A bar chart of hourly counts, drawn as SVG, with its numbers in a table for screen readers. */
export function barChart (title: string, labels: string[], series: Series[]): HTMLElement {
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.values)))
  const iw = W - PAD.left - PAD.right
  const ih = H - PAD.top - PAD.bottom
  const slot = iw / Math.max(1, labels.length)
  const bar = Math.max(1, (slot * 0.8) / Math.max(1, series.length))
  const x = (i: number): number => PAD.left + i * slot + slot / 2
  const y = (v: number): number => PAD.top + ih - (v / max) * ih
  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const v = Math.round(max * f)
    return svg('g', null,
      svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v).toFixed(1), y2: y(v).toFixed(1), class: 'grid' }),
      svg('text', { x: PAD.left - 6, y: (y(v) + 4).toFixed(1), 'text-anchor': 'end', class: 'axis' }, String(v)))
  })
  const step = Math.max(1, Math.ceil(labels.length / 8))
  const ticks = labels.map((l, i) => i % step === 0
    ? svg('text', { x: x(i).toFixed(1), y: H - 12, 'text-anchor': 'middle', class: 'axis' }, l)
    : null)
  // Grouped bars: sparse hourly counts stay readable, and equal values of two series never hide each other.
  const bars = series.map((s, k) => svg('g', { class: 'series', fill: s.color },
    s.values.map((v, i) => v > 0
      ? svg('rect', {
        x: (x(i) - (bar * series.length) / 2 + k * bar).toFixed(1),
        y: y(v).toFixed(1),
        width: bar.toFixed(1),
        height: (PAD.top + ih - y(v)).toFixed(1)
      }, svg('title', null, `${s.name} ${labels[i]}: ${v}`))
      : null)))
  const titleId = `chart-${Math.random().toString(36).slice(2)}`
  return h('figure', { class: 'chart' },
    svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': titleId, 'data-testid': 'stats-chart' },
      svg('title', { id: titleId }, title), grid, ticks, bars),
    h('figcaption', null, h('ul', { class: 'legend' }, series.map((s) =>
      h('li', null, swatch(s.color), `${s.name} (${s.values.reduce((a, b) => a + b, 0)})`)))),
    h('details', null, h('summary', null, 'Numbers'),
      h('table', null,
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Hour'), series.map((s) => h('th', { scope: 'col' }, s.name)))),
        h('tbody', null, labels.map((l, i) => h('tr', null,
          h('th', { scope: 'row' }, l), series.map((s) => h('td', null, String(s.values[i]!)))))))))
}
