import { h, table, timeEl } from '../dom.ts'
import { act } from '../errors.ts'
import type { ViewContext, ViewDef } from '../view.ts'

async function render (ctx: ViewContext): Promise<Node> {
  const client = ctx.session.client
  const slot = h('div')
  const list = h('div', { 'data-testid': 'routes' })
  async function load (): Promise<void> {
    const page = await client.inboundRoutes.list({ limit: 100 })
    list.replaceChildren(table('Inbound routes', ['Match', 'Action', 'Attachments', 'Created', ''], page.data.map((r) => {
      const del = h('button', { type: 'button', class: 'small danger' }, 'Delete')
      del.onclick = () => {
        if (!confirm(`Delete the route for ${r.match}? Mail to it is then refused.`)) return
        void act(del, slot, async () => { await client.inboundRoutes.delete(r.id); await load() })
      }
      return [
        h('code', null, r.match), 'to your webhooks (inbound.received)', r.action.include_attachments ? 'included' : 'metadata only',
        timeEl(r.created_at), del
      ]
    }), 'No inbound routes.'))
  }
  const match = h('input', {
    id: 'route-match', required: true, placeholder: `support@${ctx.session.me.domain} or *@${ctx.session.me.domain}`
  })
  const attachments = h('input', { id: 'route-attachments', type: 'checkbox' })
  const submit = h('button', { type: 'submit' }, 'Add route')
  const form = h('form', {
    class: 'card',
    onsubmit: (e: Event) => {
      e.preventDefault()
      void act(submit, slot, async () => {
        await client.inboundRoutes.create({
          match: match.value.trim(), action: { type: 'webhook', include_attachments: attachments.checked }
        })
        match.value = ''
        await load()
      })
    }
  }, h('h2', null, 'Route inbound mail'),
  h('label', { for: 'route-match' }, 'Address (or *@domain)'), match,
  h('label', { class: 'check', for: 'route-attachments' }, attachments, ' Include attachment content (base64)'),
  submit)
  await load()
  return h('section', null, h('h1', null, 'Inbound routes'),
    h('p', { class: 'help' }, 'Mail to a routed address reaches your webhooks subscribed to inbound as inbound.received events.'),
    slot, list, form)
}

export const inboundView: ViewDef = { path: /^inbound$/, title: 'Inbound routes', nav: 'Inbound', permission: 'manage', render }
