import { OutboxApiError } from '../../../client/src/mod.ts'
import { h, reveal, secretBox, statusBadge, table, timeEl } from '../dom.ts'
import { act, showError } from '../errors.ts'
import type { ViewContext, ViewDef } from '../view.ts'

export const EVENT_TYPES = [
  'delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained', 'inbound', 'domain.health_changed',
  'stream.paused', 'stream.resumed'
] as const
const TEST_TYPES = [
  'delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained', 'inbound.received', 'domain.health_changed',
  'stream.paused', 'stream.resumed'
]

/** What a webhook receives beyond its event types (docs/webhooks.md, Filters). */
interface WebhookFilters { tags?: string[], domains?: string[], environment?: 'live' | 'test' | 'all' }
interface WebhookWithFilters {
  id: string
  url: string
  events: string[]
  filters: WebhookFilters
  status: 'active' | 'paused' | 'failed'
  created_at: string
}

/** Values typed as a list: separated by commas or spaces, each once. */
function listOf (text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter((v) => v !== ''))]
}

/** The inputs of a webhook's filters, filled from `f`, and the filters they hold. */
function filterInputs (prefix: string, f: WebhookFilters = {}): { nodes: Node[], value: () => WebhookFilters } {
  const tags = h('input', { id: `${prefix}-tags`, type: 'text', placeholder: 'receipt, invoice', value: (f.tags ?? []).join(', ') })
  const domains = h('input', {
    id: `${prefix}-domains`, type: 'text', placeholder: 'mail.example.com', value: (f.domains ?? []).join(', ')
  })
  const environment = h('select', { id: `${prefix}-environment` }, (['all', 'live', 'test'] as const).map((e) =>
    h('option', { value: e, selected: (f.environment ?? 'all') === e }, e === 'all' ? 'live and test' : e)))
  return {
    nodes: [
      h('label', { for: `${prefix}-tags` }, 'Only messages tagged (any of)'), tags,
      h('label', { for: `${prefix}-domains` }, 'Only mail from the domains (any of)'), domains,
      h('label', { for: `${prefix}-environment` }, 'Environment'), environment
    ],
    value: () => {
      const t = listOf(tags.value)
      const d = listOf(domains.value)
      return {
        ...(t.length > 0 ? { tags: t } : {}),
        ...(d.length > 0 ? { domains: d } : {}),
        ...(environment.value !== 'all' ? { environment: environment.value as 'live' | 'test' } : {})
      }
    }
  }
}

/** The filters in words, for the webhook's page. */
function filtersText (f: WebhookFilters): string {
  const parts = [
    ...(f.tags !== undefined ? [`tags: ${f.tags.join(', ')}`] : []),
    ...(f.domains !== undefined ? [`domains: ${f.domains.join(', ')}`] : []),
    ...(f.environment !== undefined && f.environment !== 'all' ? [`environment: ${f.environment}`] : [])
  ]
  return parts.length === 0 ? 'none (every event of its types)' : parts.join('; ')
}

interface Delivery {
  id: string
  event_id: string
  event_type?: string
  attempt: number
  status_code: number | null
  duration_ms: number | null
  error: string | null
  at: string
  /** Absent from servers that do not report them. */
  test?: boolean
  request_body?: string | null
  response_body?: string | null
}

/** What was sent and what came back, folded: both are bounded excerpts kept by the delivery log. */
function bodies (d: Delivery): Node {
  if (d.request_body === undefined && d.response_body === undefined) return document.createTextNode('—')
  const part = (label: string, text: string | null | undefined, none: string): Node[] => [
    h('h4', null, label),
    text === null || text === undefined
      ? h('p', { class: 'help' }, none)
      // it scrolls when long: focusable, so a keyboard can scroll it too
      : h('pre', { class: 'body-excerpt', tabindex: '0', 'aria-label': `${label} body` }, text === '' ? '(empty)' : text)
  ]
  return h('details', { class: 'attempt-bodies' },
    h('summary', null, 'Bodies'),
    ...part('Sent', d.request_body, 'The event itself (kept for attempts that did not succeed).'),
    ...part('Answer', d.response_body, 'No response came.'))
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
  const filters = filterInputs('wh')
  const submit = h('button', { type: 'submit' }, 'Add webhook')
  const form = h('form', {
    class: 'card',
    onsubmit: (e: Event) => {
      e.preventDefault()
      const events = boxes.map((b) => b.querySelector('input')!).filter((i) => i.checked)
        .map((i) => i.value) as Array<typeof EVENT_TYPES[number]>
      void act(submit, slot, async () => {
        const wh = await client.request<{ url: string, secret: string }>({
          method: 'POST', path: '/v1/webhooks', body: { url: url.value, events, filters: filters.value() }
        })
        created.replaceChildren(secretBox(`Signing secret of ${wh.url}:`, wh.secret, 'webhook-secret'))
        url.value = ''
        await load()
      })
    }
  }, h('h2', null, 'Add a webhook'),
  h('label', { for: 'wh-url' }, 'HTTPS URL'), url,
  h('fieldset', null, h('legend', null, 'Events'), boxes),
  h('fieldset', null, h('legend', null, 'Filters (optional)'), filters.nodes),
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
  // Brought into view and focused: on a phone the button that caused it may be a screen or more away.
  const say = (text: string): void => { notice.textContent = text; notice.hidden = false; reveal(notice) }

  const edit = h('div')
  async function loadWebhook (): Promise<void> {
    const w = await client.request<WebhookWithFilters>({ method: 'GET', path: `/v1/webhooks/${encodeURIComponent(id)}` })
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
      h('dt', null, 'Filters'), h('dd', null, filtersText(w.filters ?? {})),
      h('dt', null, 'Status'), h('dd', null, statusBadge(w.status), ' ', toggle),
      h('dt', null, 'Created'), h('dd', null, timeEl(w.created_at))))
    edit.replaceChildren(editForm(w))
  }

  /** Changes the URL (the secret stays; queued deliveries go to the new URL) and the filters (replaced whole). */
  function editForm (w: WebhookWithFilters): HTMLElement {
    const url = h('input', { id: 'edit-url', type: 'url', required: true, value: w.url })
    const filters = filterInputs('edit', w.filters ?? {})
    const save = h('button', { type: 'submit' }, 'Save changes')
    const saved = h('p', { role: 'status', class: 'notice', hidden: true })
    const failed = h('div')
    return h('form', {
      class: 'card',
      onsubmit: (e: Event) => {
        e.preventDefault()
        void act(save, failed, async () => {
          const body = { url: url.value, filters: filters.value() }
          await client.request({ method: 'PATCH', path: `/v1/webhooks/${encodeURIComponent(id)}`, body })
          await loadWebhook()
          const next = edit.querySelector<HTMLElement>('p.notice')
          if (next !== null) {
            next.textContent = 'Saved. Deliveries still queued go to the new URL, signed with the same secret.'
            next.hidden = false
          }
        })
      }
    }, h('label', { for: 'edit-url' }, 'HTTPS URL'), url, ...filters.nodes, failed, saved, save)
  }
  async function loadDeliveries (): Promise<void> {
    try {
      const page = await client.request<{ data: Delivery[] }>({
        method: 'GET', path: `/v1/webhooks/${encodeURIComponent(id)}/deliveries`, query: { limit: 50 }
      })
      const columns = ['When', 'Type', 'Event', 'Attempt', 'Status code', 'Duration', 'Error', 'Bodies', '']
      deliveries.replaceChildren(table('Delivery attempts, newest first', columns, page.data.map((d) => [
        timeEl(d.at), d.event_type ?? '—',
        d.test === true
          ? h('span', null, h('code', { class: 'id' }, d.event_id), ' ', h('span', { class: 'badge' }, 'test'))
          : h('code', { class: 'id' }, d.event_id),
        String(d.attempt),
        d.status_code === null
          ? '—'
          : h('span', { class: d.status_code >= 200 && d.status_code < 300 ? 'ok' : 'bad' }, String(d.status_code)),
        d.duration_ms === null ? '—' : `${d.duration_ms} ms`, d.error ?? '', bodies(d),
        // a test event is not stored, so there is nothing to replay
        d.test === true ? h('span', { class: 'help' }, 'Test event') : replayButton(d.event_id)
      ]), 'No delivery attempts yet.'))
    } catch (err) {
      const unreported = err instanceof OutboxApiError && (err.status === 404 || err.status === 405) && err.code !== 'forbidden'
      if (unreported) deliveries.replaceChildren(h('p', { class: 'empty' }, 'This server does not report delivery attempts.'))
      else showError(deliveries, err)
    }
  }

  /** Sends the event of a logged attempt again (same id, fresh signature). Test events have no button: they are not stored. */
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
    h('h2', null, 'URL and filters'), edit,
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
