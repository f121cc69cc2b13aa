import { OutboxApiError, type GetMessagesQuery, type GetMessagesResponse } from '../../../client/src/mod.ts'
import { h, statusBadge, stuckBadge, table, timeEl, type Child } from '../dom.ts'
import { showError } from '../errors.ts'
import type { LiveEvent } from '../live.ts'
import type { ViewContext, ViewDef } from '../view.ts'
import { environmentSwitch } from '../environment.ts'

const STATUSES = ['queued', 'scheduled', 'sending', 'delivered', 'deferred', 'bounced', 'complained', 'failed', 'canceled'] as const
type Message = GetMessagesResponse['data'][number]
const PAGE = 25

const times = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`

function messageRow (m: Message): Child[] {
  return [
    timeEl(m.created_at),
    h('span', null, m.to.join(', ')),
    h('a', { href: `#/messages/${encodeURIComponent(m.id)}` }, m.subject === '' ? '(no subject)' : m.subject),
    [
      h('span', { class: 'row-actions' }, statusBadge(m.status), m.stuck && stuckBadge()),
      // the receiver's words, so a bounce can be understood without opening the message
      m.bounce_reason !== undefined && h('span', { class: 'reason', 'data-testid': 'bounce-reason' }, m.bounce_reason)
    ],
    h('span', { class: 'delivered-count' }, `${m.delivered_count} of ${m.recipient_count} delivered`),
    h('span', { class: 'engagement' }, m.opened_count === 0 && m.clicked_count === 0
      ? 'not opened'
      : `${times(m.opened_count, 'open')}, ${times(m.clicked_count, 'click')}`),
    h('code', { class: 'id' }, m.id)
  ]
}

function eventItem (e: LiveEvent): HTMLElement {
  const messageId = typeof e.data.message_id === 'string' ? e.data.message_id : undefined
  const to = Array.isArray(e.data.to) ? e.data.to.join(', ') : (e.data.to as string | undefined)
  return h('li', { 'data-event-id': e.id },
    statusBadge(e.type), ' ', timeEl(e.timestamp), ' ',
    to !== undefined && h('span', null, to), ' ',
    messageId !== undefined && h('a', { href: `#/messages/${encodeURIComponent(messageId)}` }, messageId))
}

async function render (ctx: ViewContext): Promise<Node> {
  const client = ctx.session.client
  const slot = h('div', { id: 'activity-error' })
  const list = h('div', { 'data-testid': 'messages' })
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more')
  const status = h('select', { id: 'f-status', name: 'status' },
    h('option', { value: '' }, 'any status'), STATUSES.map((s) => h('option', { value: s }, s)))
  // Sent to the API as typed: the API matches a prefix of the recipient's address.
  const to = h('input', { id: 'f-to', name: 'to', type: 'search', placeholder: 'ann@example.net', autocomplete: 'off' })
  const feed = h('ol', { class: 'feed', 'data-testid': 'live-feed', 'aria-live': 'polite' })
  const env = environmentSwitch('f-environment', (e) => {
    ctx.live.setEnvironment(e)
    feed.replaceChildren()
    keepInAddress()
    void load(false)
  })
  const stuck = h('input', { id: 'f-stuck', name: 'stuck', type: 'checkbox' }) as HTMLInputElement
  const tag = h('input', {
    id: 'f-tag', name: 'tag', type: 'search', placeholder: 'welcome', pattern: '[A-Za-z0-9_\\-]{1,64}', autocomplete: 'off'
  })
  // The filters come from the address (a reload or a shared address keeps them) and go back to it when applied.
  status.value = STATUSES.includes(ctx.query.get('status') as typeof STATUSES[number]) ? ctx.query.get('status')! : ''
  to.value = ctx.query.get('to') ?? ''
  tag.value = ctx.query.get('tag') ?? ''
  stuck.checked = ctx.query.get('stuck') === 'true'
  env.select.value = ctx.query.get('environment') === 'test' ? 'test' : 'live'
  ctx.live.setEnvironment(env.value())
  function keepInAddress (): void {
    const q = new URLSearchParams()
    if (status.value !== '') q.set('status', status.value)
    if (to.value.trim() !== '') q.set('to', to.value.trim())
    if (tag.value.trim() !== '') q.set('tag', tag.value.trim())
    if (stuck.checked) q.set('stuck', 'true')
    if (env.value() === 'test') q.set('environment', 'test')
    ctx.setQuery(q)
  }
  let cursor: string | null = null
  let rows: Message[] = []
  /** Increases with every request, so an answer that arrives after a newer one started is dropped. */
  let latest = 0

  /** A rejected filter: the error beside the filters, the field marked, and no results of an earlier filter left. */
  function failed (err: unknown): void {
    showError(slot, err)
    const field = err instanceof OutboxApiError ? err.field ?? err.errors[0]?.field : undefined
    for (const [input, name] of [[to, 'to'], [status, 'status'], [tag, 'tag']] as const) {
      if (field === name) { input.setAttribute('aria-invalid', 'true'); input.setAttribute('aria-describedby', 'activity-error') }
    }
    rows = []
    cursor = null
    more.hidden = true
    list.replaceChildren()
  }

  async function load (append: boolean): Promise<void> {
    const query: GetMessagesQuery = { limit: PAGE, environment: env.value() }
    if (status.value !== '') query.status = status.value as GetMessagesQuery['status']
    if (to.value.trim() !== '') query.to = to.value.trim()
    if (tag.value.trim() !== '') query.tag = tag.value.trim()
    if (stuck.checked) query.stuck = 'true'
    if (append && cursor !== null) query.cursor = cursor
    const mine = ++latest
    try {
      const page = await client.messages.list(query)
      if (mine !== latest) return
      showError(slot, undefined)
      for (const input of [to, status, tag]) { input.removeAttribute('aria-invalid'); input.removeAttribute('aria-describedby') }
      rows = append ? rows.concat(page.data) : page.data
      cursor = page.next_cursor ?? null
      more.hidden = !page.has_more
      list.replaceChildren(table('Messages, newest first', ['Created', 'To', 'Subject', 'Status', 'Recipients', 'Opens', 'Id'],
        rows.map(messageRow), 'No messages match.'))
    } catch (err) { if (mine === latest) failed(err) }
  }
  more.onclick = () => { void load(true) }

  let timer: number | undefined
  ctx.onLeave(ctx.live.on((e) => {
    feed.prepend(eventItem(e))
    while (feed.childElementCount > 30) feed.lastElementChild!.remove()
    // Status changes arrive as events: refresh the first page shortly after, once per burst.
    clearTimeout(timer)
    timer = window.setTimeout(() => { void load(false) }, 400)
  }))
  ctx.onLeave(() => clearTimeout(timer))
  // Accepted messages have no event until delivery starts: re-read the first page now and then, unless the
  // user has paged further (a reload would drop those pages) or the tab is hidden.
  const poll = window.setInterval(() => {
    if (document.visibilityState === 'visible' && rows.length <= PAGE) void load(false)
  }, 10_000)
  ctx.onLeave(() => clearInterval(poll))

  await load(false)
  return h('section', null,
    h('h1', null, 'Activity'),
    h('form', { class: 'filters', role: 'search', onsubmit: (e: Event) => { e.preventDefault(); keepInAddress(); void load(false) } },
      h('label', { for: 'f-status' }, 'Status'), status,
      h('label', { for: 'f-to' }, 'Recipient'), to,
      h('label', { for: 'f-tag' }, 'Tag'), tag,
      env.label, env.select,
      h('label', { for: 'f-stuck', class: 'nowrap' }, stuck, ' Stuck only'),
      h('button', { type: 'submit' }, 'Filter')),
    slot,
    list,
    more,
    h('h2', null, 'Live events'),
    h('p', { class: 'help' },
      'Events of your organisation as they happen (the same bodies your webhooks receive), of the environment chosen above.'),
    feed)
}

export const activityView: ViewDef = { path: /^activity$/, title: 'Activity', nav: 'Activity', permission: 'read', render }
