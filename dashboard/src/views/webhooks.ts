import { OutboxApiError } from '../../../client/src/mod.ts'
import { h, secretBox, statusBadge, table, timeEl } from '../dom.ts'
import { act, showError } from '../errors.ts'
import type { ViewContext, ViewDef } from '../view.ts'

export const EVENT_TYPES = [
  'delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained', 'inbound', 'domain.health_changed'
] as const
const TEST_TYPES = [
  'delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained', 'inbound.received', 'domain.health_changed'
]

interface Delivery {
  id: string
  event_id: string
  event_type?: string
  attempt: number
  status_code: number | null
  duration_ms: number | null
  error: string | null
  at: string
}

async function renderList (ctx: ViewContext): Promise<Node> {
  const client = ctx.session.client
  const slot = h('div')
  const created = h('div')
  const list = h('div')
  async function load (): Promise<void> {
    const page = await client.webhooks.list({ limit: 100 })
    list.replaceChildren(table('Webhooks', ['URL', 'Events', 'Status', 'Created'], page.data.map((w) => [
      h('a', { href: `#/webhooks/${encodeURIComponent(w.id)}` }, w.url), w.events.join(', '), statusBadge(w.status), timeEl(w.created_at)
    ]), 'No webhooks yet.'))
  }
  const url = h('input', { id: 'wh-url', type: 'url', required: true, placeholder: 'https://example.com/outbox/events' })
  const boxes = EVENT_TYPES.map((t) => h('label', { class: 'check' },
    h('input', { type: 'checkbox', name: 'events', value: t, checked: t === 'delivered' || t === 'bounced' }), ' ', t))
  const submit = h('button', { type: 'submit' }, 'Add webhook')
  const form = h('form', {
    class: 'card',
    onsubmit: (e: Event) => {
      e.preventDefault()
      const events = boxes.map((b) => b.querySelector('input')!).filter((i) => i.checked)
        .map((i) => i.value) as Array<typeof EVENT_TYPES[number]>
      void act(submit, slot, async () => {
        const wh = await client.webhooks.create({ url: url.value, events })
        created.replaceChildren(secretBox(`Signing secret of ${wh.url}:`, wh.secret, 'webhook-secret'))
        url.value = ''
        await load()
      })
    }
  }, h('h2', null, 'Add a webhook'),
  h('label', { for: 'wh-url' }, 'HTTPS URL'), url,
  h('fieldset', null, h('legend', null, 'Events'), boxes),
  slot, submit)
  await load()
  return h('section', null, h('h1', null, 'Webhooks'), created, list, form)
}

async function renderOne (ctx: ViewContext): Promise<Node> {
  const client = ctx.session.client
  const id = ctx.params[0]!
  const slot = h('div')
  const info = h('div')
  const deliveries = h('div', { 'data-testid': 'deliveries' })
  const notice = h('p', { role: 'status', class: 'notice', hidden: true })
  const say = (text: string): void => { notice.textContent = text; notice.hidden = false }

  async function loadWebhook (): Promise<void> {
    const w = await client.webhooks.get(id)
    const toggle = h('button', { type: 'button', class: 'small secondary' }, w.status === 'active' ? 'Pause' : 'Make active')
    toggle.onclick = () => {
      void act(toggle, slot, async () => {
        await client.webhooks.update(id, { status: w.status === 'active' ? 'paused' : 'active' })
        await loadWebhook()
      })
    }
    info.replaceChildren(h('dl', { class: 'fields' },
      h('dt', null, 'URL'), h('dd', null, w.url),
      h('dt', null, 'Events'), h('dd', null, w.events.join(', ')),
      h('dt', null, 'Status'), h('dd', null, statusBadge(w.status), ' ', toggle),
      h('dt', null, 'Created'), h('dd', null, timeEl(w.created_at))))
  }
  async function loadDeliveries (): Promise<void> {
    try {
      const page = await client.request<{ data: Delivery[] }>({
        method: 'GET', path: `/v1/webhooks/${encodeURIComponent(id)}/deliveries`, query: { limit: 50 }
      })
      const columns = ['When', 'Type', 'Event', 'Attempt', 'Status code', 'Duration', 'Error', '']
      deliveries.replaceChildren(table('Delivery attempts, newest first', columns, page.data.map((d) => [
        timeEl(d.at), d.event_type ?? '—', h('code', { class: 'id' }, d.event_id), String(d.attempt),
        d.status_code === null
          ? '—'
          : h('span', { class: d.status_code >= 200 && d.status_code < 300 ? 'ok' : 'bad' }, String(d.status_code)),
        d.duration_ms === null ? '—' : `${d.duration_ms} ms`, d.error ?? '', replayButton(d.event_id)
      ]), 'No delivery attempts yet.'))
    } catch (err) {
      const unreported = err instanceof OutboxApiError && (err.status === 404 || err.status === 405) && err.code !== 'forbidden'
      if (unreported) deliveries.replaceChildren(h('p', { class: 'empty' }, 'This server does not report delivery attempts.'))
      else showError(deliveries, err)
    }
  }

  /** Sends the event of a logged attempt again (same id, fresh signature). Test events are not stored: 404. */
  function replayButton (eventId: string): HTMLElement {
    const b = h('button', { type: 'button', class: 'small secondary', 'aria-label': `Replay ${eventId}` }, 'Replay')
    b.onclick = () => {
      notice.hidden = true
      void act(b, slot, async () => {
        await client.webhooks.replay(id, { event_id: eventId })
        say(`Event ${eventId} is being sent again.`)
        window.setTimeout(() => { void loadDeliveries() }, 1000)
      })
    }
    return b
  }

  const rotated = h('div')
  const grace = h('input', { id: 'grace-minutes', type: 'number', min: '0', max: '10080', step: '1', value: '1440', required: true })
  const rotate = h('button', { type: 'submit' }, 'Rotate secret')
  const rotateForm = h('form', {
    class: 'inline',
    onsubmit: (e: Event) => {
      e.preventDefault()
      const minutes = Number(grace.value)
      if (!confirm(`Replace the signing secret? The current one keeps signing for ${minutes} minutes, then only the new one does.`)) return
      void act(rotate, slot, async () => {
        const r = await client.webhooks.rotateSecret(id, { grace_period_minutes: minutes })
        const until = new Date(r.previous_secret_expires_at).toLocaleString()
        rotated.replaceChildren(secretBox(`New signing secret (the previous one signs too until ${until}):`, r.secret, 'rotated-secret'))
      })
    }
  }, h('label', { for: 'grace-minutes' }, 'Grace period (minutes)'), grace, rotate)

  const since = h('input', {
    id: 'recover-since', type: 'datetime-local', required: true, value: localInputValue(Date.now() - 24 * 3600_000)
  })
  const recover = h('button', { type: 'submit' }, 'Recover missed events')
  const recoverForm = h('form', {
    class: 'inline',
    onsubmit: (e: Event) => {
      e.preventDefault()
      notice.hidden = true
      void act(recover, slot, async () => {
        const r = await client.webhooks.recover(id, { since: new Date(since.value).toISOString() })
        say(r.events === 1 ? '1 missed event is being sent again.' : `${r.events} missed events are being sent again.`)
        window.setTimeout(() => { void loadDeliveries() }, 1000)
      })
    }
  }, h('label', { for: 'recover-since' }, 'Events since'), since, recover)

  const type = h('select', { id: 'test-type' }, TEST_TYPES.map((t) => h('option', { value: t }, t)))
  const send = h('button', { type: 'submit' }, 'Send test event')
  const testForm = h('form', {
    class: 'inline',
    onsubmit: (e: Event) => {
      e.preventDefault()
      notice.hidden = true
      void act(send, slot, async () => {
        await client.request({ method: 'POST', path: `/v1/webhooks/${encodeURIComponent(id)}/test`, body: { type: type.value } })
        say(`A signed test ${type.value} event is on its way.`)
        window.setTimeout(() => { void loadDeliveries() }, 1000)
      })
    }
  }, h('label', { for: 'test-type' }, 'Event type'), type, send)
  const del = h('button', { type: 'button', class: 'danger' }, 'Delete webhook')
  del.onclick = () => {
    if (!confirm('Delete this webhook? Nothing more is delivered to it.')) return
    void act(del, slot, async () => { await client.webhooks.delete(id); location.hash = '#/webhooks' })
  }
  const refresh = h('button', { type: 'button', class: 'small secondary', onclick: () => { void loadDeliveries() } }, 'Refresh')
  await loadWebhook()
  await loadDeliveries()
  return h('section', null,
    h('p', null, h('a', { href: '#/webhooks' }, '← Webhooks')),
    h('h1', null, 'Webhook ', h('code', null, id)),
    info, slot,
    h('h2', null, 'Send a test event'), testForm, notice,
    h('h2', null, 'Recover missed events'),
    h('p', null, 'Sends again every event since that time (up to 30 days) that this webhook did not answer with a 2xx.'), recoverForm,
    h('h2', null, 'Signing secret'), rotateForm, rotated,
    h('h2', null, 'Delivery attempts ', refresh), deliveries,
    h('h2', null, 'Danger zone'), del)
}

/** A time as a `datetime-local` input value (local time, to the minute). */
function localInputValue (ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000)
  return d.toISOString().slice(0, 16)
}

export const webhooksView: ViewDef = { path: /^webhooks$/, title: 'Webhooks', nav: 'Webhooks', permission: 'manage', render: renderList }
export const webhookView: ViewDef = { path: /^webhooks\/([^/]+)$/, title: 'Webhook', permission: 'manage', render: renderOne }
