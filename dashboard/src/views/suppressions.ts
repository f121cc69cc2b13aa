import { OutboxApiError } from '../../../client/src/mod.ts'
import { h, table, timeEl } from '../dom.ts'
import { act } from '../errors.ts'
import type { ViewContext, ViewDef } from '../view.ts'
import { environmentSwitch } from '../environment.ts'

interface Suppression { email: string, reason: string, message_id?: string, created_at: string, expires_at?: string }
interface ImportReport {
  imported: number
  already_suppressed: number
  refused_count: number
  refused: Array<{ line: number, email: string, reason: string }>
}

const REASONS = ['hard_bounce', 'complaint', 'unsubscribe', 'manual']

/**
 * The import and the export send and take CSV, which the generated client (JSON only) does not: they go through
 * fetch with the session's key, and an error answer becomes the client's own error type.
 */
async function call (key: string, method: string, path: string, body?: { type: string, text: string }): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` }
  if (body !== undefined) headers['content-type'] = body.type
  const res = await fetch(location.origin + path, { method, headers, ...(body !== undefined ? { body: body.text } : {}) })
  if (!res.ok) throw OutboxApiError.from(res.status, await res.text(), res.headers)
  return res
}

/** A day of a date input as the instant it starts in UTC, or undefined when empty. */
function dayStart (input: HTMLInputElement): string | undefined {
  return input.value === '' ? undefined : `${input.value}T00:00:00Z`
}

function reportOf (r: ImportReport): HTMLElement {
  const refused = r.refused.length === 0
    ? null
    : table('Refused lines', ['Line', 'Address', 'Why'], r.refused.map((x) => [String(x.line), x.email, x.reason]), '')
  return h('div', { 'data-testid': 'import-report', role: 'status' },
    h('p', null, `${r.imported} imported, ${r.already_suppressed} already suppressed, ${r.refused_count} refused` +
      (r.refused_count > r.refused.length ? ` (the first ${r.refused.length} shown)` : '') + '.'),
    refused)
}

async function render (ctx: ViewContext): Promise<Node> {
  const client = ctx.session.client
  const key = ctx.session.key
  const canManage = ctx.session.can('manage')
  const slot = h('div')
  const list = h('div', { 'data-testid': 'suppressions' })
  const env = environmentSwitch('sup-environment', () => { void load() })
  const reason = h('select', { id: 'sup-reason', name: 'reason' },
    h('option', { value: '' }, 'any'), ...REASONS.map((r) => h('option', { value: r }, r.replace('_', ' ')))) as HTMLSelectElement
  const since = h('input', { id: 'sup-since', type: 'date' }) as HTMLInputElement
  const until = h('input', { id: 'sup-until', type: 'date' }) as HTMLInputElement
  for (const el of [reason, since, until]) el.onchange = () => { void load() }

  function filterQuery (): Record<string, string> {
    const q: Record<string, string> = { environment: env.value() }
    if (reason.value !== '') q.reason = reason.value
    const s = dayStart(since)
    const u = dayStart(until)
    if (s !== undefined) q.since = s
    if (u !== undefined) q.until = u
    return q
  }

  async function load (): Promise<void> {
    const page = await client.request<{ data: Suppression[] }>({
      method: 'GET', path: '/v1/suppressions', query: { limit: 100, ...filterQuery() }
    })
    const headers = ['Address', 'Reason', 'Message', 'Since', 'Until'].concat(canManage ? [''] : [])
    list.replaceChildren(table('Suppressed addresses', headers, page.data.map((s) => {
      const message = s.message_id !== undefined ? h('a', { href: `#/messages/${encodeURIComponent(s.message_id)}` }, s.message_id) : '—'
      const until = s.expires_at !== undefined ? timeEl(s.expires_at) : '—'
      const row: Array<Node | string> = [s.email, s.reason.replace('_', ' '), message, timeEl(s.created_at), until]
      if (canManage) {
        const del = h('button', { type: 'button', class: 'small secondary' }, 'Remove')
        del.onclick = () => { void act(del, slot, async () => { await client.suppressions.delete(s.email); await load() }) }
        row.push(del)
      }
      return row
    }), 'No suppressed addresses.'))
  }

  const exportButton = h('button', { type: 'button', class: 'secondary' }, 'Export CSV')
  exportButton.onclick = () => {
    void act(exportButton, slot, async () => {
      const res = await call(key, 'GET', `/v1/suppressions/export?${new URLSearchParams(filterQuery()).toString()}`)
      const link = h('a', { href: URL.createObjectURL(await res.blob()), download: 'suppressions.csv' })
      link.click()
      // the download reads the object URL after this turn
      setTimeout(() => { URL.revokeObjectURL(link.href) }, 60_000)
    })
  }

  const email = h('input', { id: 'sup-email', type: 'email', required: true, placeholder: 'someone@example.net' })
  const submit = h('button', { type: 'submit' }, 'Suppress')
  const form = canManage && h('form', {
    class: 'card',
    onsubmit: (e: Event) => {
      e.preventDefault()
      void act(submit, slot, async () => {
        await client.suppressions.create({ email: email.value.trim() })
        email.value = ''
        await load()
      })
    }
  }, h('h2', null, 'Suppress an address'), h('label', { for: 'sup-email' }, 'Email address'), email, submit)

  const importSlot = h('div')
  const file = h('input', { id: 'sup-file', type: 'file', accept: '.csv,.json,text/csv,application/json' }) as HTMLInputElement
  const pasted = h('textarea', {
    id: 'sup-paste', rows: 5, placeholder: 'email,reason\nsomeone@example.net,unsubscribe'
  }) as HTMLTextAreaElement
  const importButton = h('button', { type: 'submit' }, 'Import')
  const importForm = canManage && h('form', {
    class: 'card',
    'aria-labelledby': 'sup-import-heading',
    onsubmit: (e: Event) => {
      e.preventDefault()
      void act(importButton, importSlot, async () => {
        const chosen = file.files?.[0]
        const text = chosen !== undefined ? await chosen.text() : pasted.value
        const json = text.trimStart().startsWith('{')
        const res = await call(key, 'POST', '/v1/suppressions/import', { type: json ? 'application/json' : 'text/csv', text })
        importSlot.replaceChildren(reportOf(await res.json() as ImportReport))
        file.value = ''
        await load()
      })
    }
  }, h('h2', { id: 'sup-import-heading' }, 'Import addresses'),
  h('p', { class: 'help' }, 'A CSV file with a header line naming email and optionally reason and expires_at, or JSON ' +
    '{"addresses": [...]}; up to 100,000 addresses.'),
  h('label', { for: 'sup-file' }, 'File'), file,
  h('label', { for: 'sup-paste' }, 'Or paste the list'), pasted, importButton, importSlot)

  await load()
  return h('section', null, h('h1', null, 'Suppressions'),
    h('p', { class: 'help' }, 'Hard bounces, complaints and unsubscribes add addresses here; sends to them are skipped.'),
    h('div', { class: 'filters' }, env.label, env.select, h('label', { for: 'sup-reason' }, 'Reason'), reason,
      h('label', { for: 'sup-since' }, 'From'), since, h('label', { for: 'sup-until' }, 'Before'), until, exportButton),
    slot, list, form, importForm)
}

export const suppressionsView: ViewDef = { path: /^suppressions$/, title: 'Suppressions', nav: 'Suppressions', permission: 'read', render }
