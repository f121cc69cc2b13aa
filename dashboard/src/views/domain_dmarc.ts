import type { GetDomainsByIdDmarcResponse } from '../../../client/src/mod.ts'
import { copyButton, h, table } from '../dom.ts'
import type { ViewContext, ViewDef } from '../view.ts'

type Day = GetDomainsByIdDmarcResponse['days'][number]

/** `n` of `total` with its whole percentage, rounded down so that 100% means all of them: "160 (96%)". */
function share (n: number, total: number): string {
  return total === 0 ? String(n) : `${n} (${n === total ? 100 : Math.floor(100 * n / total)}%)`
}

function dayCard (d: Day): HTMLElement {
  const figures = h('dl', { class: 'fields' },
    h('dt', null, 'Messages'), h('dd', null, String(d.messages)),
    h('dt', null, 'DMARC pass'), h('dd', null, share(d.dmarc.pass, d.messages)),
    h('dt', null, 'SPF pass / aligned'), h('dd', null, `${share(d.spf.pass, d.messages)} / ${share(d.spf.aligned, d.messages)}`),
    h('dt', null, 'DKIM pass / aligned'), h('dd', null, `${share(d.dkim.pass, d.messages)} / ${share(d.dkim.aligned, d.messages)}`),
    h('dt', null, 'Quarantined / rejected'), h('dd', null, `${d.disposition.quarantine} / ${d.disposition.reject}`),
    h('dt', null, 'Reporters'), h('dd', null, d.reporters.map((r) => `${r.name} (${r.reports})`).join(', ')))
  const rows = d.sources.map((s) => [h('code', { class: 'wrap' }, s.ip), String(s.messages), share(s.dmarc_pass, s.messages)])
  if (d.other_sources !== undefined) {
    rows.push(['other sources', String(d.other_sources.messages), share(d.other_sources.dmarc_pass, d.other_sources.messages)])
  }
  return h('article', { class: 'card', 'data-day': d.date },
    h('h2', null, d.date, ' ', h('span', { class: 'help' }, `${d.reports} report${d.reports === 1 ? '' : 's'}`)),
    figures,
    table(`Sending sources on ${d.date}`, ['Source', 'Messages', 'DMARC pass'], rows, 'No sources.'))
}

async function render (ctx: ViewContext): Promise<Node> {
  const id = ctx.params[0]!
  const client = ctx.session.client
  const [domain, summary] = await Promise.all([client.domains.get(id), client.domains.dmarc(id)])
  const address = h('code', { class: 'wrap' }, summary.rua)
  return h('section', null,
    h('h1', null, `DMARC reports: ${domain.name}`),
    h('p', { class: 'help' }, 'Receivers mail their daily DMARC aggregate reports to the rua address of the domain\'s DMARC ' +
      'record; each day below adds up the reports about it.'),
    h('p', null, 'rua: ', h('span', { class: 'copyable' }, address, copyButton(summary.rua, address, 'the rua address'))),
    h('div', { 'data-testid': 'dmarc-days' },
      summary.days.length === 0
        ? h('p', { class: 'empty' }, `No reports from ${summary.from} to ${summary.to}.`)
        : [...summary.days].reverse().map(dayCard)),
    h('p', null, h('a', { href: '#/domains' }, 'Back to domains')))
}

export const domainDmarcView: ViewDef = { path: /^domains\/(dom_[0-9a-z]+)\/dmarc$/, title: 'DMARC reports', permission: 'manage', render }
