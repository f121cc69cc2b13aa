import { h, stuckBadge, timeEl } from './dom.ts'

interface Attempt { type: string, timestamp: string, data: Record<string, unknown> }

/** What the notice reads of a message, as GET /v1/messages/{id} answers it. */
export interface StuckMessage {
  next_attempt_at: string
  events: Attempt[]
  to?: unknown
  cc?: unknown
  bcc?: unknown
  recipients?: Array<{ address: string, status: string }>
}

const WAITING = new Set(['queued', 'scheduled', 'sending', 'deferred'])

/** The domains of the recipients still waiting (all of them when the message has no recipient states yet). */
function destinations (m: StuckMessage): string[] {
  const waiting = (m.recipients ?? []).filter((r) => WAITING.has(r.status)).map((r) => r.address)
  const addresses = waiting.length > 0
    ? waiting
    : [m.to, m.cc, m.bcc].flatMap((list) => Array.isArray(list) ? list.map(String) : [])
  const domains = addresses.map((a) => (/@([^@>\s]+)>?\s*$/.exec(a)?.[1] ?? '').toLowerCase()).filter((d) => d !== '')
  return [...new Set(domains)]
}

const ATTEMPTS = new Set(['deferred', 'delivered', 'bounced', 'failed'])

/** The latest delivery attempt and, for a deferral, the receiving server's reply. */
function lastAttempt (m: StuckMessage): HTMLElement {
  const last = m.events.filter((e) => ATTEMPTS.has(e.type)).at(-1)
  const label = h('strong', null, 'The last attempt: ')
  if (last === undefined) return h('li', null, label, 'none was made yet: no engine has taken the message up.')
  if (last.type !== 'deferred') {
    return h('li', null, label, 'at ', timeEl(last.timestamp), ` (${last.type}); the recipients still waiting were not attempted since.`)
  }
  const said = last.data.smtp_response
  const reply = typeof said === 'string' && said !== '' ? said : 'no reply recorded'
  return h('li', null, label, 'at ', timeEl(last.timestamp), ' the receiving server answered ',
    h('code', { 'data-testid': 'last-reply' }, reply), '. A 4xx reply is temporary: the receiver asks to be tried again later.')
}

/**
 * Why a stuck message is flagged, when its attempt was due and that none has happened since, and what to check: the
 * last attempt's reply, the destination, and the engine and its queue, each with where the docs explain it.
 */
export function stuckNotice (m: StuckMessage): HTMLElement {
  const domains = destinations(m)
  return h('div', { class: 'notice warning', 'data-testid': 'stuck' },
    h('p', null, stuckBadge(), ' The next delivery attempt was due at ', timeEl(m.next_attempt_at), ' and has not happened yet.'),
    h('p', null, 'What to check:'),
    h('ul', { class: 'checks' },
      lastAttempt(m),
      h('li', null, h('strong', null, 'The destination: '),
        domains.length > 0 ? h('code', null, domains.join(', ')) : 'the recipients\' domains',
        '. An engine tries a destination that keeps answering 4xx or refusing connections less often ',
        '(docs/delivery.md, “Destinations that keep answering 4xx”).'),
      h('li', null, h('strong', null, 'The engine and its queue: '), 'that an engine is running and delivering. Its ',
        h('a', { href: '/readyz', 'data-testid': 'readyz' }, 'readiness check'),
        ' names an unwell NATS, Redis or a full queue; the outbound backlog is ',
        h('code', null, 'outbox_jetstream_consumer_pending'), ' in its metrics (docs/operations.md, “Health, readiness and metrics”; ',
        'docs/reading.md, “Stuck messages”).')))
}
