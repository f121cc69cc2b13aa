import { h, table, timeEl } from '../dom.ts'
import { act } from '../errors.ts'
import type { ViewContext, ViewDef } from '../view.ts'

async function render (ctx: ViewContext): Promise<Node> {
  const client = ctx.session.client
  const manage = ctx.session.can('manage')
  const slot = h('div')
  const list = h('div', { 'data-testid': 'streams' })
  async function load (): Promise<void> {
    const page = await client.streams.list()
    list.replaceChildren(table('Message streams', ['Id', 'Type', 'Name', 'Description', 'Created', ''], page.data.map((s) => {
      let del: Node | string = ''
      if (manage && s.type === 'broadcast') {
        const button = h('button', { type: 'button', class: 'small danger' }, 'Delete')
        button.onclick = () => {
          if (!confirm(`Delete the stream ${s.id}? Sends naming it are then refused.`)) return
          void act(button, slot, async () => { await client.streams.delete(s.id); await load() })
        }
        del = button
      }
      return [h('code', null, s.id), s.type, s.name, s.description ?? '', s.created_at !== undefined ? timeEl(s.created_at) : '—', del]
    }), 'No streams.'))
  }
  await load()
  const parts: Node[] = [h('h1', null, 'Message streams'),
    h('p', { class: 'help' }, 'Every send goes on a stream: transactional by default, or a broadcast stream named in "stream" ' +
      '(X-Outbox-Stream over SMTP). Unsubscribes and complaints from a broadcast stream suppress the address on that stream only.'),
    slot, list]
  if (manage) {
    const id = h('input', { id: 'stream-id', required: true, pattern: '[a-z0-9][a-z0-9\\-]{0,39}', placeholder: 'news' })
    const name = h('input', { id: 'stream-name', required: true, placeholder: 'Newsletter' })
    const description = h('input', { id: 'stream-description' })
    const submit = h('button', { type: 'submit' }, 'Create stream')
    parts.push(h('form', {
      class: 'card',
      onsubmit: (e: Event) => {
        e.preventDefault()
        void act(submit, slot, async () => {
          const text = description.value.trim()
          await client.streams.create({ id: id.value.trim(), name: name.value.trim(), ...(text !== '' ? { description: text } : {}) })
          id.value = ''
          name.value = ''
          description.value = ''
          await load()
        })
      }
    }, h('h2', null, 'Create a broadcast stream'),
    h('label', { for: 'stream-id' }, 'Id (lower-case letters, digits and dashes)'), id,
    h('label', { for: 'stream-name' }, 'Name'), name,
    h('label', { for: 'stream-description' }, 'Description (optional)'), description,
    submit))
  }
  return h('section', null, ...parts)
}

export const streamsView: ViewDef = { path: /^streams$/, title: 'Message streams', nav: 'Streams', permission: 'read', render }
