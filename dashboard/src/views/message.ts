import { fill, h, statusBadge, table, timeEl } from '../dom.ts'
import { stuckNotice } from '../stuck_notice.ts'
import { act } from '../errors.ts'
import type { ViewContext, ViewDef } from '../view.ts'
import { contentSection } from './message_content.ts'

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

/** `datetime-local` wants local time without a zone: `2026-11-25T07:30:00`. */
function localInput (iso: string): string {
  const d = new Date(iso)
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 19)
}

/** Cancel and Reschedule, while the message is scheduled and the key may send. */
function scheduleActions (ctx: ViewContext, id: string, scheduledAt: string, reload: () => Promise<void>): HTMLElement {
  const slot = h('div')
  const when = h('input', { type: 'datetime-local', step: 1, value: localInput(scheduledAt), 'aria-label': 'New time' })
  const reschedule = h('button', { type: 'button', class: 'small secondary' }, 'Reschedule')
  reschedule.onclick = () => {
    void act(reschedule, slot, async () => {
      await ctx.session.client.messages.update(id, { scheduled_at: new Date(when.value).toISOString() })
      await reload()
    })
  }
  const cancel = h('button', { type: 'button', class: 'small danger' }, 'Cancel')
  cancel.onclick = () => {
    if (!confirm('Cancel this message? It will never be sent.')) return
    void act(cancel, slot, async () => { await ctx.session.client.messages.cancel(id); await reload() })
  }
  return h('div', { 'data-testid': 'schedule-actions' }, h('span', { class: 'row-actions' }, when, reschedule, cancel), slot)
}

interface Recipient { address: string, status: string, attempts: number, last_event_at: string | null, reason?: string }

/** Every recipient of the request with its own state; a suppressed one says why it was skipped. */
function recipientTable (recipients: Recipient[]): HTMLElement {
  return table('Recipients', ['Address', 'Status', 'Attempts', 'Last event'], recipients.map((r) => [
    r.address,
    h('span', null, statusBadge(r.status), r.reason !== undefined && [' ', h('span', { class: 'meta', 'data-testid': 'suppression-reason' }, r.reason.replace(/_/g, ' '))]),
    String(r.attempts),
    r.last_event_at === null ? '—' : timeEl(r.last_event_at)
  ]), 'No recipients.')
}

/**
 * The counts the activity list shows ("1 of 2 delivered", complained recipients counted as delivered, as the API's
 * `delivered_count`), then how many recipients are in each other state.
 */
function recipientCounts (m: MessageDetail, recipients: Recipient[]): HTMLElement {
  const others = new Map<string, number>()
  for (const r of recipients) {
    if (r.status !== 'delivered' && r.status !== 'complained') others.set(r.status, (others.get(r.status) ?? 0) + 1)
  }
  const parts = [`${String(m.delivered_count)} of ${String(m.recipient_count)} delivered`, ...[...others].map(([s, n]) => `${n} ${s}`)]
  return h('p', { 'data-testid': 'recipient-counts' }, parts.join(' · '))
}

const SHOWN = [
  'id', 'status', 'from', 'to', 'cc', 'bcc', 'reply_to', 'subject', 'environment', 'created_at', 'scheduled_at', 'next_attempt_at', 'stuck',
  'metadata', 'tags'
]

/** A message as GET /v1/messages/{id} answers it: the fields shown generically, plus those this view reads. */
type MessageDetail = Record<string, unknown> & { events: Envelope[], status: string, recipients?: Recipient[] }

async function render (ctx: ViewContext): Promise<Node> {
  const id = ctx.params[0]!
  const body = h('div')
  let environment: 'live' | 'test' = 'live'
  async function load (): Promise<void> {
    const m = await ctx.session.client.messages.get(id) as MessageDetail
    environment = m.environment === 'test' ? 'test' : 'live'
    // A scheduled message's next attempt is its scheduled time: shown once.
    const sameTime = typeof m.scheduled_at === 'string' && Date.parse(String(m.next_attempt_at)) === Date.parse(m.scheduled_at)
    const fields = SHOWN.filter((k) => m[k] !== undefined && !(k === 'next_attempt_at' && sameTime))
      .concat(Object.keys(m).filter((k) => !SHOWN.includes(k) && k !== 'events' && k !== 'headers' && k !== 'recipients'))
    const headers = m.headers as Record<string, string> | undefined
    fill(body,
      m.stuck === true && typeof m.next_attempt_at === 'string' && stuckNotice({ ...m, next_attempt_at: m.next_attempt_at }),
      h('dl', { class: 'fields' }, fields.map((k) => [h('dt', null, k), h('dd', null,
        k === 'status'
          ? statusBadge(String(m[k]))
          : (k.endsWith('_at') ? timeEl(String(m[k])) : (Array.isArray(m[k]) ? (m[k] as unknown[]).join(', ') || '—' : value(m[k]))))])),
      m.status === 'scheduled' && typeof m.scheduled_at === 'string' && ctx.session.can('send') &&
        scheduleActions(ctx, id, m.scheduled_at, load),
      headers !== undefined && [
        h('h2', null, 'Headers'),
        h('pre', { class: 'raw' }, Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\n'))
      ],
      h('h2', null, 'Recipients'),
      recipientCounts(m, m.recipients ?? []),
      h('div', { 'data-testid': 'recipients' }, recipientTable(m.recipients ?? [])),
      h('h2', null, 'Events'),
      timeline(m.events))
  }
  const content = contentSection(ctx, id)
  let timer: number | undefined
  ctx.onLeave(ctx.live.on((e) => {
    if (e.data.message_id !== id) return
    clearTimeout(timer)
    timer = window.setTimeout(() => { void load().catch(() => {}); content.retry() }, 300)
  }))
  ctx.onLeave(() => clearTimeout(timer))
  await load()
  ctx.live.setEnvironment(environment)
  return h('section', null,
    h('p', null, h('a', { href: '#/activity' }, '← Activity')),
    h('h1', null, 'Message ', h('code', null, id)),
    body,
    content.el)
}

export const messageView: ViewDef = { path: /^messages\/([^/]+)$/, title: 'Message', permission: 'read', render }
