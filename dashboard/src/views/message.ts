import { fill, h, statusBadge, timeEl } from '../dom.ts'
import type { ViewContext, ViewDef } from '../view.ts'

interface Envelope { id: string, type: string, timestamp: string, data: Record<string, unknown> }

function value (v: unknown): Node | string {
  if (v === undefined || v === null) return '—'
  if (typeof v === 'string') return v
  return h('code', null, JSON.stringify(v))
}

/** The event's data, without the fields every event repeats. */
function eventDetails (e: Envelope): HTMLElement {
  const entries = Object.entries(e.data).filter(([k]) => k !== 'message_id' && k !== 'metadata' && k !== 'tags')
  return h('dl', { class: 'compact' }, entries.map(([k, v]) => [h('dt', null, k), h('dd', null, value(v))]))
}

function timeline (events: Envelope[]): HTMLElement {
  if (events.length === 0) return h('p', { class: 'empty' }, 'No events yet.')
  return h('ol', { class: 'timeline', 'data-testid': 'timeline' }, events.map((e) => h('li', { 'data-type': e.type },
    h('div', null, statusBadge(e.type), ' ', timeEl(e.timestamp), ' ', h('code', { class: 'id' }, e.id)),
    eventDetails(e))))
}

const SHOWN = ['id', 'status', 'from', 'to', 'cc', 'bcc', 'reply_to', 'subject', 'environment', 'created_at', 'scheduled_at', 'metadata', 'tags']

async function render (ctx: ViewContext): Promise<Node> {
  const id = ctx.params[0]!
  const body = h('div')
  async function load (): Promise<void> {
    const m = await ctx.session.client.messages.get(id) as Record<string, unknown> & { events: Envelope[], status: string }
    const fields = SHOWN.filter((k) => m[k] !== undefined).concat(Object.keys(m).filter((k) => !SHOWN.includes(k) && k !== 'events' && k !== 'headers'))
    const headers = m.headers as Record<string, string> | undefined
    fill(body,
      h('dl', { class: 'fields' }, fields.map((k) => [h('dt', null, k), h('dd', null,
        k === 'status' ? statusBadge(String(m[k])) : (k.endsWith('_at') ? timeEl(String(m[k])) : (Array.isArray(m[k]) ? (m[k] as unknown[]).join(', ') || '—' : value(m[k]))))])),
      headers !== undefined && [h('h2', null, 'Headers'), h('pre', { class: 'raw' }, Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\n'))],
      h('h2', null, 'Events'),
      timeline(m.events))
  }
  let timer: number | undefined
  ctx.onLeave(ctx.live.on((e) => {
    if (e.data.message_id !== id) return
    clearTimeout(timer)
    timer = window.setTimeout(() => { void load().catch(() => {}) }, 300)
  }))
  ctx.onLeave(() => clearTimeout(timer))
  await load()
  return h('section', null,
    h('p', null, h('a', { href: '#/activity' }, '← Activity')),
    h('h1', null, 'Message ', h('code', null, id)),
    body)
}

export const messageView: ViewDef = { path: /^messages\/([^/]+)$/, title: 'Message', permission: 'read', render }
