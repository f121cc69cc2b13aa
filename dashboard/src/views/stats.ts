import { h } from '../dom.ts'
import { barChart } from '../chart.ts'
import { showError } from '../errors.ts'
import { RATE_NAMES, rates } from '../rates.ts'
import type { ViewContext, ViewDef } from '../view.ts'
import { environmentSwitch } from '../environment.ts'

const RANGES = { 24: 'Last 24 hours', 72: 'Last 3 days', 168: 'Last 7 days' } as const

const pct = (fraction: number): string => `${Math.round(fraction * 10_000) / 100} %`

/** One warning per stream the reputation guard paused: which rate reached what, since when, how to resume (docs/reputation.md). */
async function pausedNotices (ctx: ViewContext, into: HTMLElement): Promise<void> {
  try {
    const rep = await ctx.session.client.reputation.get()
    into.replaceChildren(...rep.streams.flatMap((s) => {
      if (s.paused === undefined) return []
      const what = s.paused.reason === 'complaint_rate'
        ? `its complaint rate reached ${pct(s.paused.rates.complaint_rate)} (threshold ${pct(rep.thresholds.complaint_rate)})`
        : `its hard-bounce rate reached ${pct(s.paused.rates.bounce_rate)} (threshold ${pct(rep.thresholds.bounce_rate)})`
      return [h('p', { class: 'warning', role: 'status', 'data-testid': 'stream-paused' },
        `Sending on stream ${s.stream} is paused since ${new Date(s.paused.paused_at).toLocaleString()}: ${what} over ` +
        `${s.paused.rates.volume} sends. An admin resumes it with POST /v1/reputation/streams/${s.stream}/resume.`)]
    }))
  } catch {
    // the notice is an addition to the view: without it the statistics still show
    into.replaceChildren()
  }
}

async function render (ctx: ViewContext): Promise<Node> {
  const slot = h('div')
  const paused = h('div', { 'data-testid': 'stream-notices' })
  void pausedNotices(ctx, paused)
  const area = h('div')
  const range = h('select', { id: 'stats-range' }, Object.entries(RANGES).map(([hours, label]) => h('option', { value: hours }, label)))
  const env = environmentSwitch('stats-environment', () => { void load() })
  const totals = h('dl', { class: 'totals', 'data-testid': 'stats-totals' })
  const rateArea = h('div', { 'data-testid': 'stats-rates' })
  const rateTotals = h('dl', { class: 'totals', 'data-testid': 'rate-totals' })

  async function load (): Promise<void> {
    const hours = Number(range.value)
    const now = new Date()
    const to = new Date(Math.ceil(now.getTime() / 3_600_000) * 3_600_000)
    const from = new Date(to.getTime() - hours * 3_600_000)
    try {
      const stats = await ctx.session.client.stats.get({
        from: from.toISOString(), to: to.toISOString(), interval: 'hour', environment: env.value()
      })
      showError(slot, undefined)
      const series = stats.series ?? []
      const starts = series.map((p) => Date.parse(p.start))
      const pick = (k: 'sent' | 'delivered' | 'bounced' | 'opened'): number[] => series.map((p) => p.counts[k] ?? 0)
      const rangeName = RANGES[hours as keyof typeof RANGES].toLowerCase()
      area.replaceChildren(barChart(`Sent, delivered, bounced and opened per hour, ${rangeName}`, starts, [
        { name: 'sent', color: 'var(--muted)', values: pick('sent') },
        { name: 'delivered', color: 'var(--ok)', values: pick('delivered') },
        { name: 'bounced', color: 'var(--bad)', values: pick('bounced') },
        { name: 'opened', color: 'var(--accent)', values: pick('opened') }
      ]))
      totals.replaceChildren(...Object.entries(stats.counts).map(([k, v]) => figure(k, String(v))))
      const perHour = series.map((p) => rates(p.counts))
      rateArea.replaceChildren(barChart(`Bounce, complaint, open and click rates per hour in percent, ${rangeName}`, starts, [
        { name: 'bounce %', color: 'var(--bad)', values: perHour.map((r) => r.bounce ?? 0) },
        { name: 'complaint %', color: 'var(--warn)', values: perHour.map((r) => r.complaint ?? 0) },
        { name: 'open %', color: 'var(--accent)', values: perHour.map((r) => r.open ?? 0) },
        { name: 'click %', color: 'var(--ok)', values: perHour.map((r) => r.click ?? 0) }
      ]))
      const overall = rates(stats.counts)
      rateTotals.replaceChildren(...RATE_NAMES.map((k) => figure(`${k} rate`, overall[k] === undefined ? '—' : `${overall[k]} %`)))
    } catch (err) { showError(slot, err) }
  }
  range.onchange = () => { void load() }
  await load()
  return h('section', null,
    h('h1', null, 'Statistics'),
    paused,
    h('div', { class: 'filters' }, h('label', { for: 'stats-range' }, 'Range'), range, env.label, env.select),
    slot, area,
    h('p', { class: 'help' }, 'Sent: messages handed to delivery, a scheduled message in the hour it goes out (not while it waits). ' +
      'Times in your time zone.'),
    h('h2', null, 'Totals over the range'), totals,
    h('h2', null, 'Rates'),
    h('p', { class: 'help' }, 'Bounces over delivered plus bounced messages; complaints, opens and clicks over delivered messages. ' +
      'An hour without deliveries counts as 0.'),
    rateArea,
    h('h3', null, 'Over the range'), rateTotals)
}

export const statsView: ViewDef = { path: /^stats$/, title: 'Statistics', nav: 'Statistics', permission: 'read', render }

/** One name and its figure, grouped so that a line break falls between figures, never inside one. */
function figure (name: string, value: string): HTMLElement {
  return h('div', null, h('dt', null, name), h('dd', null, value))
}
