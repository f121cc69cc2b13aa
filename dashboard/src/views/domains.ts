import type { GetDomainsResponse } from '../../../client/src/mod.ts'
import { copyButton, h, statusBadge, table, timeEl } from '../dom.ts'
import { act } from '../errors.ts'
import type { ViewContext, ViewDef } from '../view.ts'

type Domain = GetDomainsResponse['data'][number]
type DnsRecord = Domain['records'][number]

/** A record's value with a copy button, or, when it cannot be published as listed, the API's warning. */
function valueCell (r: DnsRecord): HTMLElement {
  if (r.warning !== undefined) return h('p', { class: 'warning', role: 'note' }, h('strong', null, 'Not publishable yet: '), r.warning)
  const code = h('code', { class: 'wrap' }, r.value)
  return h('span', { class: 'copyable' }, code, copyButton(r.value, code, `value of the ${r.type} record ${r.name}`))
}

function recordRow (r: DnsRecord): HTMLElement[] {
  const name = h('code', { class: 'wrap' }, r.name)
  return [
    h('span', null, r.type),
    h('span', { class: 'copyable' }, name, copyButton(r.name, name, `name of the ${r.type} record ${r.name}`)),
    valueCell(r),
    r.verified ? statusBadge('verified') : h('span', { class: 'badge s-missing' }, 'not found')
  ]
}

async function render (ctx: ViewContext): Promise<Node> {
  const client = ctx.session.client
  const slot = h('div')
  const list = h('div', { 'data-testid': 'domains' })

  function card (d: Domain): HTMLElement {
    const verify = h('button', { type: 'button', class: 'small' }, 'Verify')
    verify.onclick = () => { void act(verify, slot, async () => { await client.domains.verify(d.id); await load() }) }
    const del = h('button', { type: 'button', class: 'small danger' }, 'Delete')
    del.onclick = () => {
      if (!confirm(`Delete ${d.name}? Keys bound to it can no longer send.`)) return
      void act(del, slot, async () => { await client.domains.delete(d.id); await load() })
    }
    return h('article', { class: 'card', 'data-domain': d.name },
      h('h2', null, d.name, ' ', statusBadge(d.status)),
      h('p', { class: 'help' }, d.status === 'verified'
        ? ['Verified ', timeEl(d.verified_at)]
        : d.status === 'lapsed'
          ? 'Another organisation verified this domain first; this claim has lapsed.'
          : 'Publish these DNS records, then verify.'),
      table(`DNS records of ${d.name}`, ['Type', 'Name', 'Value', 'Last check'], d.records.map(recordRow), 'No records.', {
        class: 'rows records'
      }),
      h('p', { class: 'help' }, 'Last check: whether Verify found the record in DNS; "not found" until the first check.'),
      h('p', { class: 'row-actions' }, d.status === 'pending' && verify,
        d.status === 'verified' && h('a', { href: `#/domains/${d.id}/dmarc` }, `DMARC reports of ${d.name}`), del))
  }

  async function load (): Promise<void> {
    const page = await client.domains.list({ limit: 100 })
    list.replaceChildren(...(page.data.length === 0 ? [h('p', { class: 'empty' }, 'No domains.')] : page.data.map(card)))
  }

  const name = h('input', { id: 'domain-name', required: true, placeholder: 'mail.example.com' })
  const submit = h('button', { type: 'submit' }, 'Add domain')
  const form = h('form', {
    class: 'card',
    onsubmit: (e: Event) => {
      e.preventDefault()
      void act(submit, slot, async () => { await client.domains.create({ name: name.value.trim() }); name.value = ''; await load() })
    }
  }, h('h2', null, 'Add a sending domain'), h('label', { for: 'domain-name' }, 'Domain name'), name, submit)
  await load()
  return h('section', null, h('h1', null, 'Domains'), slot, list, form)
}

export const domainsView: ViewDef = { path: /^domains$/, title: 'Domains', nav: 'Domains', permission: 'manage', render }
