import type { GetAuditLogQuery, GetAuditLogResponse } from '../../../client/src/mod.ts'
import { h, table, timeEl } from '../dom.ts'
import { showError } from '../errors.ts'
import type { ViewContext, ViewDef } from '../view.ts'

/** The organisation's audit log (GET /v1/audit-log, docs/audit-log.md): who changed what, newest first. */
type AuditEntry = GetAuditLogResponse['data'][number]

const PAGE = 50

/** `field: value` pairs of an entry's changes, values as JSON. */
function changesText (changes: Record<string, unknown>): string {
  const parts = Object.entries(changes).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
  return parts.length === 0 ? '—' : parts.join('; ')
}

function actorText (a: AuditEntry['actor'], selfId: string): string {
  if (a.type === 'operator') return `operator ${a.id}`
  return a.id === selfId ? `${a.id} (this key)` : a.id
}

async function render (ctx: ViewContext): Promise<Node> {
  const client = ctx.session.client
  const slot = h('div', { id: 'audit-error' })
  const list = h('div', { 'data-testid': 'audit-log' })
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more')
  const action = h('input', { id: 'audit-action', name: 'action', type: 'search', placeholder: 'api_key.rotated', autocomplete: 'off' })
  const actor = h('input', { id: 'audit-actor', name: 'actor', type: 'search', placeholder: 'key_…', autocomplete: 'off' })
  const target = h('input', { id: 'audit-target', name: 'target', type: 'search', placeholder: 'wh_… or an address', autocomplete: 'off' })
  let cursor: string | null = null
  let rows: AuditEntry[] = []
  let latest = 0

  async function load (append: boolean): Promise<void> {
    const query: Record<string, string | number> = { limit: PAGE }
    for (const [input, name] of [[action, 'action'], [actor, 'actor'], [target, 'target']] as const) {
      if (input.value.trim() !== '') query[name] = input.value.trim()
    }
    if (append && cursor !== null) query.cursor = cursor
    const mine = ++latest
    try {
      const page = await client.auditLog.list(query as GetAuditLogQuery)
      if (mine !== latest) return
      showError(slot, undefined)
      rows = append ? rows.concat(page.data) : page.data
      cursor = page.next_cursor
      more.hidden = !page.has_more
      list.replaceChildren(table('Changes, newest first', ['When', 'Action', 'Target', 'By', 'From', 'Changes'], rows.map((e) => [
        timeEl(e.at), h('code', null, e.action), e.target === null ? '—' : h('code', { class: 'wrap' }, e.target),
        actorText(e.actor, ctx.session.me.key_id), e.address, h('span', { class: 'wrap' }, changesText(e.changes))
      ]), 'No changes match.'))
    } catch (err) {
      if (mine !== latest) return
      showError(slot, err)
      rows = []
      cursor = null
      more.hidden = true
      list.replaceChildren()
    }
  }
  more.onclick = () => { void load(true) }
  await load(false)
  return h('section', null,
    h('h1', null, 'Audit log'),
    h('p', { class: 'help' }, 'Every change to keys, webhooks, domains, routes, templates, suppressions, the plan and egress ' +
      'settings, with the key that made it and its address. Kept for the installation\'s retention (365 days by default).'),
    h('form', { class: 'filters', role: 'search', onsubmit: (e: Event) => { e.preventDefault(); void load(false) } },
      h('label', { for: 'audit-action' }, 'Action'), action,
      h('label', { for: 'audit-actor' }, 'Key id'), actor,
      h('label', { for: 'audit-target' }, 'Target'), target,
      h('button', { type: 'submit' }, 'Filter')),
    slot, list, more)
}

export const auditLogView: ViewDef = { path: /^audit-log$/, title: 'Audit log', nav: 'Audit log', permission: 'manage', render }
