import { h, table, timeEl } from '../dom.ts'
import { act } from '../errors.ts'
import type { ViewContext, ViewDef } from '../view.ts'
import { environmentSwitch } from '../environment.ts'

async function render (ctx: ViewContext): Promise<Node> {
  const client = ctx.session.client
  const canManage = ctx.session.can('manage')
  const slot = h('div')
  const list = h('div', { 'data-testid': 'suppressions' })
  const env = environmentSwitch('sup-environment', () => { void load() })
  async function load (): Promise<void> {
    const page = await client.suppressions.list({ limit: 100, environment: env.value() })
    const headers = ['Address', 'Reason', 'Message', 'Since'].concat(canManage ? [''] : [])
    list.replaceChildren(table('Suppressed addresses', headers, page.data.map((s) => {
      const message = s.message_id !== undefined ? h('a', { href: `#/messages/${encodeURIComponent(s.message_id)}` }, s.message_id) : '—'
      const row: Array<Node | string> = [s.email, s.reason.replace('_', ' '), message, timeEl(s.created_at)]
      if (canManage) {
        const del = h('button', { type: 'button', class: 'small secondary' }, 'Remove')
        del.onclick = () => { void act(del, slot, async () => { await client.suppressions.delete(s.email); await load() }) }
        row.push(del)
      }
      return row
    }), 'No suppressed addresses.'))
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
  await load()
  return h('section', null, h('h1', null, 'Suppressions'),
    h('p', { class: 'help' }, 'Hard bounces, complaints and unsubscribes add addresses here; sends to them are skipped.'),
    h('div', { class: 'filters' }, env.label, env.select),
    slot, list, form)
}

export const suppressionsView: ViewDef = { path: /^suppressions$/, title: 'Suppressions', nav: 'Suppressions', permission: 'read', render }
