import { h } from '../dom.ts'
import { barChart } from '../chart.ts'
import { showError } from '../errors.ts'
import { RATE_NAMES, rates } from '../rates.ts'
import type { ViewContext, ViewDef } from '../view.ts'
import { environmentSwitch } from '../environment.ts'

const RANGES = { 24: 'Last 24 hours', 72: 'Last 3 days', 168: 'Last 7 days' } as const

async function render (ctx: ViewContext): Promise<Node> {
  const slot = h('div')
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
      const labels = series.map((p) => {
        const d = new Date(p.start)
        return hours <= 24
          ? d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
          : d.toLocaleString(undefined, { weekday: 'short', hour: '2-digit' })
      })
      const pick = (k: 'delivered' | 'bounced' | 'opened'): number[] => series.map((p) => p.counts[k] ?? 0)
      const rangeName = RANGES[hours as keyof typeof RANGES].toLowerCase()
      area.replaceChildren(barChart(`Delivered, bounced and opened per hour, ${rangeName}`, labels, [
        { name: 'delivered', color: 'var(--ok)', values: pick('delivered') },
        { name: 'bounced', color: 'var(--bad)', values: pick('bounced') },
        { name: 'opened', color: 'var(--accent)', values: pick('opened') }
      ]))
      totals.replaceChildren(...Object.entries(stats.counts).flatMap(([k, v]) => [h('dt', null, k), h('dd', null, String(v))]))
      const perHour = series.map((p) => rates(p.counts))
      rateArea.replaceChildren(barChart(`Bounce, complaint, open and click rates per hour in percent, ${rangeName}`, labels, [
        { name: 'bounce %', color: 'var(--bad)', values: perHour.map((r) => r.bounce ?? 0) },
        { name: 'complaint %', color: 'var(--warn)', values: perHour.map((r) => r.complaint ?? 0) },
        { name: 'open %', color: 'var(--accent)', values: perHour.map((r) => r.open ?? 0) },
        { name: 'click %', color: 'var(--ok)', values: perHour.map((r) => r.click ?? 0) }
      ]))
      const overall = rates(stats.counts)
      rateTotals.replaceChildren(...RATE_NAMES.flatMap((k) => [
        h('dt', null, `${k} rate`), h('dd', null, overall[k] === undefined ? '—' : `${overall[k]} %`)
      ]))
    } catch (err) { showError(slot, err) }
  }
  range.onchange = () => { void load() }
  await load()
  return h('section', null,
    h('h1', null, 'Statistics'),
    h('div', { class: 'filters' }, h('label', { for: 'stats-range' }, 'Range'), range, env.label, env.select),
    slot, area,
    h('h2', null, 'Totals over the range'), totals,
    h('h2', null, 'Rates'),
    h('p', { class: 'help' }, 'Bounces over delivered plus bounced messages; complaints, opens and clicks over delivered messages. ' +
      'An hour without deliveries counts as 0.'),
    rateArea,
    h('h3', null, 'Over the range'), rateTotals)
}

export const statsView: ViewDef = { path: /^stats$/, title: 'Statistics', nav: 'Statistics', permission: 'read', render }
