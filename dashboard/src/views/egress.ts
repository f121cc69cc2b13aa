import { h, table, timeEl, type Child } from '../dom.ts'
import { errorBox } from '../errors.ts'
import { egressLanes, egressPools, egressSources, type LaneView, type PoolView, type SourceView } from '../operator_api.ts'
import type { ViewContext, ViewDef } from '../view.ts'

/** "45 s", "3 min 20 s", "2 h 5 min": how long the oldest message of a lane has waited. */
export function duration (seconds: number): string {
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min${seconds % 60 === 0 ? '' : ` ${seconds % 60} s`}`
  const minutes = Math.floor(seconds / 60) % 60
  return `${Math.floor(seconds / 3600)} h${minutes === 0 ? '' : ` ${minutes} min`}`
}

/** Labelled pairs, shown only when they have a value. */
function pairs (entries: Array<[string, Child | null]>): HTMLElement {
  return h('dl', { class: 'compact' }, entries.filter(([, v]) => v !== null).map(([k, v]) => [h('dt', null, k), h('dd', null, v)]))
}

/** The throttle in words (never by colour alone): out of its pools, paused, slowed by a reply, or at full rate. */
function throttleCell (t: LaneView['throttle']): HTMLElement {
  const state = t.out_until !== null ? 'out' : t.paused_until !== null ? 'paused' : t.factor < 1 ? 'slowed' : 'full rate'
  return h('div', null,
    h('span', { class: `badge s-${state.replace(/ /g, '')}`, 'data-testid': 'throttle-state' }, state),
    pairs([
      ['Factor', String(t.factor)],
      ['Paused until', t.paused_until === null ? null : timeEl(t.paused_until)],
      ['Out until', t.out_until === null ? null : timeEl(t.out_until)],
      ['Rule', t.reason === null ? null : h('code', null, t.reason)],
      ['Changed', t.changed_at === null ? null : timeEl(t.changed_at)]
    ]))
}

/** A count against its allowance: the words, and a <progress> bar named by them (its label). */
function meter (id: string, label: string, value: number, max: number, testId: string): HTMLElement {
  return h('div', { class: 'meter', 'data-testid': testId },
    h('label', { for: id }, `${label}: ${value} of ${max}`),
    h('progress', { id, max: Math.max(1, max), value: Math.min(value, max) }, `${value} of ${max}`))
}

function warmupCell (w: LaneView['warmup'], index: number): Child {
  if (w === undefined) return h('span', { class: 'help' }, 'not warming')
  return h('div', { class: 'warmup' },
    h('span', { 'data-testid': 'warmup-day' }, `Day ${w.day}`),
    meter(`warmup-today-${index}`, 'Sent today', w.sent_today, w.per_day, 'warmup-today'),
    meter(`warmup-hour-${index}`, 'This hour', w.sent_this_hour, w.per_hour, 'warmup-hour'))
}

// Every cell holds one node: on narrow screens a cell is a grid of its column's name and its value (style.css).
function lanesTable (lanes: LaneView[]): HTMLElement {
  const headers = ['Source', 'Provider', 'Connections', 'Rate per minute', 'Throttle', 'Waiting', 'Warm-up']
  const rows = lanes.map((l, i): Child[] => [
    h('strong', null, l.source),
    h('code', { class: 'wrap' }, l.provider),
    `${l.connections} of ${l.limits.maxConnections}`,
    `${l.messages_per_minute_now} of ${l.limits.messagesPerMinute}`,
    throttleCell(l.throttle),
    h('span', null,
      String(l.waiting.messages),
      l.waiting.oldest_seconds !== null && h('span', { class: 'help' }, ` · oldest ${duration(l.waiting.oldest_seconds)}`)),
    warmupCell(l.warmup, i)
  ])
  return table('Egress lanes: each source toward each provider', headers, rows,
    'No lane has been used yet: a lane appears once mail has left from a source toward a provider.', { class: 'rows lanes' })
}

function sourcesTable (sources: SourceView[]): HTMLElement {
  return table('Sources', ['Name', 'Address', 'EHLO name', 'Warm-up', 'Updated'], sources.map((s) => [
    h('strong', null, s.name),
    h('code', null, s.address),
    h('code', { class: 'wrap' }, s.ehlo),
    s.warmup === undefined
      ? 'none'
      : h('span', null, 'since ', timeEl(s.warmup.started_at),
        s.warmup.steps === undefined ? ', built-in curve' : `, ${s.warmup.steps.length} steps`),
    timeEl(s.updated_at)
  ]), 'No sources: mail leaves from the host\'s own address.')
}

function poolsTable (pools: PoolView[]): HTMLElement {
  return table('Pools', ['Name', 'Sources (weight)'], pools.map((p) => [
    h('strong', null, p.name),
    p.sources.length === 0
      ? 'none: the host\'s own address'
      : h('span', null, p.sources.map((m, i) => [i > 0 && ', ', h('code', null, m.source), ` (${m.weight})`]))
  ]), 'No pools.')
}

/** Fills `area` with the table, or with the API's error for this one list (the others still show). */
async function section<T> (area: HTMLElement, read: () => Promise<T[]>, draw: (rows: T[]) => HTMLElement): Promise<void> {
  try {
    const rows = await read()
    area.replaceChildren(draw(rows))
  } catch (err) {
    area.replaceChildren(errorBox(err))
  }
}

async function render (ctx: ViewContext): Promise<Node> {
  const client = (): ViewContext['session']['client'] => ctx.session.client
  const lanes = h('div', { class: 'scroll', 'data-testid': 'lanes', tabindex: '0', role: 'region', 'aria-labelledby': 'lanes-title' })
  const sources = h('div', { 'data-testid': 'sources' })
  const pools = h('div', { 'data-testid': 'pools' })
  const readAt = h('span', { class: 'help', role: 'status', 'data-testid': 'read-at' })
  const refresh = h('button', { type: 'button' }, 'Refresh')
  let loading = false
  async function load (): Promise<void> {
    loading = true
    refresh.setAttribute('aria-disabled', 'true')
    try {
      await Promise.all([
        section(lanes, async () => await egressLanes(client()), lanesTable),
        section(sources, async () => await egressSources(client()), sourcesTable),
        section(pools, async () => await egressPools(client()), poolsTable)
      ])
      readAt.textContent = `Read at ${new Date().toLocaleTimeString()}`
    } finally {
      loading = false
      refresh.removeAttribute('aria-disabled')
    }
  }
  // Not disabled while reading, so keyboard focus stays on the button; a click meanwhile does nothing.
  refresh.onclick = () => { if (!loading) void load() }
  await load()
  return h('section', null,
    h('h1', null, 'Egress'),
    h('p', { class: 'help' }, 'How mail leaves this installation, read from the state every engine shares: each lane (a source ' +
      'toward a mailbox provider) with its limits, its throttle, the mail waiting for it and a warming source\'s progress.'),
    h('div', { class: 'filters' }, refresh, readAt),
    h('h2', { id: 'lanes-title' }, 'Lanes'), lanes,
    h('h2', null, 'Sources'), sources,
    h('h2', null, 'Pools'), pools)
}

export const egressView: ViewDef = { path: /^egress$/, title: 'Egress', nav: 'Egress', permission: 'operator', render }
