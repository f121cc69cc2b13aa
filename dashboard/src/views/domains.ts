import type { GetDomainsByIdHealthResponse, GetDomainsResponse, PostDomainsByIdVerifyResponse } from '../../../client/src/mod.ts'
import { type Child, copyButton, h, reveal, showResult, statusBadge, table, timeEl } from '../dom.ts'
import { act } from '../errors.ts'
import { nonPublicValues } from '../private_address.ts'
import type { ViewContext, ViewDef } from '../view.ts'

type Domain = GetDomainsResponse['data'][number]
type DnsRecord = Domain['records'][number]
type Health = GetDomainsByIdHealthResponse
type Verified = PostDomainsByIdVerifyResponse

const HEALTH_SAYS: Record<string, string> = {
  ok: 'Every item checked is as it should be.',
  warning: 'Mail passes, but something needs a look.',
  error: 'Mail fails a check at receivers, or is refused: fix the items marked error.',
  not_checked: 'Nothing could be checked; try again shortly.'
}

/** A `domain.health_changed` event's data, as far as the notice reads it (docs/webhooks.md). */
interface HealthChanged {
  domain_id: string
  worsened: Array<{ check: string, subject: string, status: string, previous_status: string | null }>
}

/** A change for the worse is shown on its domain for this many days. */
const NOTICE_DAYS = 7

/** The notice of a domain whose health got worse: when, and each item with what it was before. */
function worsenedNotice (at: string, change: HealthChanged): HTMLElement {
  const items = change.worsened.map((w) =>
    `${w.check} ${w.subject} is ${w.status}${w.previous_status === null ? '' : ` (was ${w.previous_status})`}`)
  return h('p', { class: 'warning', role: 'note', 'data-testid': 'health-changed' },
    h('strong', null, 'Health got worse '), timeEl(at), ': ', items.join('; '), '. Check health for what to do.')
}

/** The health check's answer: a notice saying what the overall status means, then every item. */
function healthPanel (d: Domain, health: Health): HTMLElement {
  const rows = health.items.map((i) =>
    [h('span', null, i.check), h('code', { class: 'wrap' }, i.subject), statusBadge(i.status), i.message])
  return h('div', { 'data-testid': 'health' },
    h('p', { class: health.status === 'ok' ? 'notice' : 'warning', role: 'status' },
      h('strong', null, `Health: ${health.status}. `), HEALTH_SAYS[health.status] ?? '', ' Checked ', timeEl(health.checked_at), '.'),
    table(`Health of ${d.name}`, ['Check', 'Subject', 'Status', 'Message'], rows, 'No items.', { class: 'rows' }))
}

/** A record's value with a copy button, or, when it cannot be published as listed, the API's warning. */
function valueCell (r: DnsRecord): HTMLElement {
  if (r.warning !== undefined) return h('p', { class: 'warning', role: 'note' }, h('strong', null, 'Not publishable yet: '), r.warning)
  const code = h('code', { class: 'wrap' }, r.value)
  const nonPublic = nonPublicValues(r.type, r.value)
  return h('span', { class: 'copyable' }, code, copyButton(r.value, code, `value of the ${r.type} record ${r.name}`),
    nonPublic.length > 0 && h('p', { class: 'warning', role: 'note', 'data-testid': 'non-public' },
      h('strong', null, 'Not a public address: '), nonPublic.join(', '),
      '. Receivers on the internet never see mail from or reach such an address; ',
      r.type === 'TXT' ? 'check OB_SPF and the egress sources\' addresses.' : 'check the host names this installation is set up with.'))
}

/**
 * A domain created verified (by `outbox org create`) was never looked up in DNS: its `verified_at` is its
 * `created_at`, which a verification never sets. Its ed25519 DKIM record counts as found only once a look-up found
 * it, so that record found means a later verification did look.
 */
function neverLookedUp (d: Domain): boolean {
  const ed25519Found = d.records.some((r) => r.type === 'TXT' && /k=ed25519/.test(r.value) && r.verified)
  return d.status === 'verified' && d.verified_at === d.created_at && !ed25519Found
}

function lastCheck (d: Domain, r: DnsRecord): HTMLElement {
  if (neverLookedUp(d)) return h('span', { class: 'badge s-unchecked' }, 'not checked')
  return r.verified ? statusBadge('verified') : h('span', { class: 'badge s-missing' }, 'not found')
}

function recordRow (d: Domain, r: DnsRecord): HTMLElement[] {
  const name = h('code', { class: 'wrap' }, r.name)
  return [
    h('span', null, r.type),
    h('span', { class: 'copyable' }, name, copyButton(r.name, name, `name of the ${r.type} record ${r.name}`)),
    valueCell(r),
    lastCheck(d, r)
  ]
}

/** What a verification found: verified, or which records DNS did not answer with, and when it looked. */
function verifyResult (d: Domain, v: Verified, at: string): Child[] {
  const missing = v.records.filter((r) => r.status === 'missing' && r.value !== '')
  const when = h('p', { class: 'help' }, 'Checked ', timeEl(at), '.')
  const rows = missing.map((r) => [h('span', null, r.type), h('code', { class: 'wrap' }, r.name), h('code', { class: 'wrap' }, r.value)])
  const list = missing.length > 0 && table(`Records of ${d.name} not found in DNS`, ['Type', 'Name', 'Expected value'], rows, '')
  if (v.status === 'verified') {
    return [h('h3', null, `${d.name} is verified`), when,
      missing.length > 0 && h('p', null, 'Optional records not found yet (mail is sent without them):'), list]
  }
  return [
    h('h3', null, `${d.name} is not verified yet`),
    when,
    h('p', null, missing.length === 1 ? 'This record was not found in DNS:' : `These ${missing.length} records were not found in DNS:`),
    list,
    h('p', { class: 'help' }, 'A record just published can take a while to be seen (minutes, up to its TTL or the ',
      'time your DNS provider takes to publish); verify again later.')
  ]
}

async function render (ctx: ViewContext): Promise<Node> {
  const client = ctx.session.client
  const slot = h('div')
  const list = h('div', { 'data-testid': 'domains' })

  function card (d: Domain, changed: Map<string, { at: string, change: HealthChanged }>): HTMLElement {
    // The card's results and errors show under its buttons; a verification re-renders every card, so its result
    // goes into the new card.
    const result = h('div', { 'data-result-of': d.id })
    const verify = h('button', { type: 'button', class: 'small' }, 'Verify')
    verify.onclick = () => {
      void act(verify, result, async () => {
        const v = await client.domains.verify(d.id)
        const at = new Date().toISOString()
        await load()
        const slotNow = list.querySelector<HTMLElement>(`[data-result-of="${CSS.escape(d.id)}"]`) ?? result
        showResult(slotNow, `Verification of ${d.name}`, verifyResult(d, v, at)).dataset.testid = 'verify-result'
      })
    }
    const healthSlot = h('div')
    const check = h('button', { type: 'button', class: 'small' }, 'Check health')
    check.onclick = () => {
      void act(check, result, async () => {
        healthSlot.replaceChildren(healthPanel(d, await client.domains.health(d.id)))
        reveal(healthSlot.firstElementChild as HTMLElement)
      })
    }
    const del = h('button', { type: 'button', class: 'small danger' }, 'Delete')
    del.onclick = () => {
      if (!confirm(`Delete ${d.name}? Keys bound to it can no longer send.`)) return
      void act(del, result, async () => { await client.domains.delete(d.id); await load() })
    }
    return h('article', { class: 'card', 'data-domain': d.name },
      h('h2', null, d.name, ' ', statusBadge(d.status)),
      h('p', { class: 'help' }, d.status === 'verified'
        ? ['Verified ', timeEl(d.verified_at)]
        : d.status === 'lapsed'
          ? 'Another organisation verified this domain first; this claim has lapsed.'
          : 'Publish these DNS records, then verify.'),
      table(`DNS records of ${d.name}`, ['Type', 'Name', 'Value', 'Last check'], d.records.map((r) => recordRow(d, r)), 'No records.', {
        class: 'rows records'
      }),
      h('p', { class: 'help', 'data-testid': 'last-check-help' }, neverLookedUp(d)
        ? 'Last check: not checked. This domain was verified when it was created, without a DNS look-up; ' +
          'Check health looks its records up now.'
        : 'Last check: whether Verify found the record in DNS; "not found" until the first check.'),
      changed.has(d.id) && worsenedNotice(changed.get(d.id)!.at, changed.get(d.id)!.change),
      healthSlot,
      h('p', { class: 'row-actions' }, d.status === 'pending' && verify, check,
        d.status === 'verified' && h('a', { href: `#/domains/${d.id}/dmarc` }, `DMARC reports of ${d.name}`), del),
      result)
  }

  /** Newest first, so the first event of a domain is its latest; a key without `read` simply shows no notice. */
  async function changes (): Promise<Map<string, { at: string, change: HealthChanged }>> {
    const out = new Map<string, { at: string, change: HealthChanged }>()
    const since = Date.now() - NOTICE_DAYS * 86_400_000
    const events = await client.events.list({ type: 'domain.health_changed', limit: 100 }).catch(() => ({ data: [] }))
    for (const e of events.data) {
      const change = e.data as unknown as HealthChanged
      if (Date.parse(e.timestamp) >= since && !out.has(change.domain_id)) out.set(change.domain_id, { at: e.timestamp, change })
    }
    return out
  }

  async function load (): Promise<void> {
    const [page, changed] = await Promise.all([client.domains.list({ limit: 100 }), changes()])
    list.replaceChildren(...(page.data.length === 0 ? [h('p', { class: 'empty' }, 'No domains.')] : page.data.map((d) => card(d, changed))))
  }

  const name = h('input', { id: 'domain-name', required: true, placeholder: 'mail.example.com' })
  const submit = h('button', { type: 'submit' }, 'Add domain')
  const form = h('form', {
    class: 'card',
    onsubmit: (e: Event) => {
      e.preventDefault()
      void act(submit, slot, async () => { await client.domains.create({ name: name.value.trim() }); name.value = ''; await load() })
    }
  }, h('h2', null, 'Add a sending domain'), h('label', { for: 'domain-name' }, 'Domain name'), name, submit, slot)
  await load()
  return h('section', null, h('h1', null, 'Domains'), list, form)
}

export const domainsView: ViewDef = { path: /^domains$/, title: 'Domains', nav: 'Domains', permission: 'manage', render }
