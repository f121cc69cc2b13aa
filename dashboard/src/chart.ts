import { h, svg } from './dom.ts'
import { DAY_LABEL_PX, isMidnight, timeTicks, valueTicks } from './chart_scale.ts'

export interface Series { name: string, color: string, values: number[] }

const H = 240
const PAD = { right: 8, top: 10, bottom: 40 }
/** Rough width of one character of the 11 px axis font, to keep labels inside the drawing. */
const CHAR_PX = 6.5

// Set through CSSOM rather than a style attribute: no markup is built from strings anywhere in the dashboard.
function swatch (color: string): HTMLElement {
  const el = h('span', { class: 'swatch' })
  el.style.background = color
  return el
}

const timeOf = (ms: number): string => new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
const dayOf = (ms: number): string => new Date(ms).toLocaleDateString(undefined, { weekday: 'short', day: 'numeric', month: 'short' })
/** An hour as the "Numbers" table and the bars' tooltips name it: its date and time. */
const hourOf = (ms: number): string => `${dayOf(ms)}, ${timeOf(ms)}`

/**
 * The SVG drawn `width` CSS pixels wide, one drawing unit a pixel, so that the axis text keeps its 11 px on a phone
 * (a fixed drawing scaled down to 340 px would shrink it to 5). Value ticks are round (1, 2 or 5 × 10^n); time
 * ticks are spaced for the width, and say the date at each local midnight.
 */
function draw (width: number, titleId: string, title: string, starts: number[], series: Series[]): SVGElement {
  const ticks = valueTicks(Math.max(0, ...series.flatMap((s) => s.values)))
  const top = ticks.at(-1)!
  const left = Math.max(...ticks.map((t) => String(t).length)) * CHAR_PX + 10
  const iw = width - left - PAD.right
  const ih = H - PAD.top - PAD.bottom
  const slot = iw / Math.max(1, starts.length)
  const bar = Math.max(1, (slot * 0.8) / Math.max(1, series.length))
  const x = (i: number): number => left + i * slot + slot / 2
  const y = (v: number): number => PAD.top + ih - (v / top) * ih
  const grid = ticks.map((v) => svg('g', { class: 'y-tick' },
    svg('line', { x1: left, x2: width - PAD.right, y1: y(v).toFixed(1), y2: y(v).toFixed(1), class: 'grid' }),
    svg('text', { x: left - 6, y: (y(v) + 4).toFixed(1), 'text-anchor': 'end', class: 'axis' }, String(v))))
  const labelled = timeTicks(starts, slot)
  // A date under the first time label only when no midnight (which says its own date) follows close behind.
  const first = labelled[0]
  const firstDated = first !== undefined &&
    !labelled.some((t) => t !== first && isMidnight(starts[t.index]!) && x(t.index) - x(first.index) < DAY_LABEL_PX)
  const xTicks = labelled.map((t, k) => {
    const ms = starts[t.index]!
    const lines = t.kind === 'day' ? [dayOf(ms)] : [timeOf(ms), ...((isMidnight(ms) || (k === 0 && firstDated)) ? [dayOf(ms)] : [])]
    const half = (Math.max(...lines.map((l) => l.length)) * CHAR_PX) / 2
    // kept inside the drawing: the labels at either end are anchored at their tick rather than centred on it
    const anchor = x(t.index) - half < 0 ? 'start' : x(t.index) + half > width ? 'end' : 'middle'
    return svg('g', { class: 'x-tick' },
      svg('line', { x1: x(t.index).toFixed(1), x2: x(t.index).toFixed(1), y1: PAD.top + ih, y2: PAD.top + ih + 4, class: 'grid' }),
      svg('text', { x: x(t.index).toFixed(1), y: H - PAD.bottom + 18, 'text-anchor': anchor, class: 'axis' },
        lines.map((l, i) => svg('tspan', { x: x(t.index).toFixed(1), dy: i === 0 ? 0 : 14 }, l))))
  })
  // Grouped bars: sparse hourly counts stay readable, and equal values of two series never hide each other.
  const bars = series.map((s, k) => svg('g', { class: 'series', fill: s.color },
    s.values.map((v, i) => v > 0
      ? svg('rect', {
        x: (x(i) - (bar * series.length) / 2 + k * bar).toFixed(1),
        y: y(v).toFixed(1),
        width: bar.toFixed(1),
        height: (PAD.top + ih - y(v)).toFixed(1)
      }, svg('title', null, `${s.name} ${hourOf(starts[i]!)}: ${v}`))
      : null)))
  return svg('svg', {
    width, height: H, viewBox: `0 0 ${width} ${H}`, role: 'img', 'aria-labelledby': titleId, 'data-testid': 'stats-chart'
  }, svg('title', { id: titleId }, title), grid, xTicks, bars)
}

/**
 * Once the drawing is on the page, where text can be measured: a time label that would leave the drawing is anchored
 * at its tick, and one that would still touch the label before it is left out (the spacing chosen from estimated
 * widths keeps this to the ends of the axis).
 */
function declutter (chart: SVGElement, width: number): void {
  let right = -Infinity
  for (const tick of chart.querySelectorAll<SVGGElement>('.x-tick')) {
    const text = tick.querySelector<SVGTextElement>('text')!
    let box = text.getBBox()
    if (box.x < 0) text.setAttribute('text-anchor', 'start')
    else if (box.x + box.width > width) text.setAttribute('text-anchor', 'end')
    box = text.getBBox()
    if (box.x < right + 6 || box.x < 0 || box.x + box.width > width) { tick.remove(); continue }
    right = box.x + box.width
  }
}

/**
 * A bar chart of hourly counts (`starts`: each hour's start, epoch ms), drawn as SVG to the width its box has (again
 * when that changes), with its numbers in a table for screen readers.
 */
export function barChart (title: string, starts: number[], series: Series[]): HTMLElement {
  const titleId = `chart-${Math.random().toString(36).slice(2)}`
  const plot = h('div', { class: 'plot' })
  let drawn = -1
  const observer = new ResizeObserver(() => {
    if (!plot.isConnected) { observer.disconnect(); return }
    const width = Math.floor(plot.clientWidth)
    if (width <= 0 || width === drawn) return
    drawn = width
    const chart = draw(width, titleId, title, starts, series)
    plot.replaceChildren(chart)
    declutter(chart, width)
  })
  observer.observe(plot)
  return h('figure', { class: 'chart' },
    plot,
    h('figcaption', null, h('ul', { class: 'legend' }, series.map((s) =>
      h('li', null, swatch(s.color), `${s.name} (${s.values.reduce((a, b) => a + b, 0)})`)))),
    h('details', null, h('summary', null, 'Numbers'),
      h('table', null,
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Hour'), series.map((s) => h('th', { scope: 'col' }, s.name)))),
        h('tbody', null, starts.map((ms, i) => h('tr', null,
          h('th', { scope: 'row' }, hourOf(ms)), series.map((s) => h('td', null, String(s.values[i]!)))))))))
}
