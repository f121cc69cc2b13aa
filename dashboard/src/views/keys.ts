import type { GetApiKeysResponse } from '../../../client/src/mod.ts'
import { h, secretBox, showResult, statusBadge, table, timeEl } from '../dom.ts'
import { act } from '../errors.ts'
import type { ViewContext, ViewDef } from '../view.ts'

type Key = GetApiKeysResponse['data'][number]
const PERMISSIONS = ['send', 'read', 'manage', 'admin'] as const

function state (k: Key): HTMLElement {
  if (k.revoked_at !== undefined) return statusBadge('revoked')
  if (k.expires_at !== undefined) return h('span', null, statusBadge('expiring'), ' until ', timeEl(k.expires_at))
  return statusBadge('active')
}

async function render (ctx: ViewContext): Promise<Node> {
  // Read at each call: rotating the signed-in key switches the session (and its client) to the new value.
  const api = (): ViewContext['session']['client'] => ctx.session.client
  // Each result and error is shown where its action was taken: a rotation's above the list, a new key's in its form;
  // one new value at a time.
  const slot = h('div')
  const created = h('div')
  const list = h('div', { 'data-testid': 'keys' })

  function actions (k: Key): HTMLElement | string {
    if (k.revoked_at !== undefined) return ''
    const grace = h('input', {
      type: 'number', min: 0, max: 10080, value: 60, class: 'num', 'aria-label': `Grace period in minutes for ${k.name}`
    })
    const rotate = h('button', { type: 'button', class: 'small secondary' }, 'Rotate')
    rotate.onclick = () => {
      const minutes = Number(grace.value)
      const self = k.id === ctx.session.me.key_id
      const old = minutes === 0
        ? 'The old value stops working at once.'
        : `The old value keeps working for ${minutes} minute${minutes === 1 ? '' : 's'}.`
      const switching = self ? ' You are signed in with this key: the dashboard switches to the new value.' : ''
      if (!confirm(`Rotate the key "${k.name}"? ${old}${switching}`)) return
      void act(rotate, slot, async () => {
        const r = await api().apiKeys.rotate(k.id, { grace_period_minutes: minutes })
        if (self) await ctx.switchKey(r.key)
        await load()
        created.replaceChildren()
        showResult(slot, `New value of ${k.name}`, secretBox(`New value of ${k.name}:`, r.key, 'new-key-value'),
          h('p', { class: 'help' }, 'The old value works until ', timeEl(r.old_key_expires_at), '.'),
          self && h('p', { class: 'help', 'data-testid': 'switched' }, 'This dashboard now uses the new value.'))
      })
    }
    const revoke = h('button', { type: 'button', class: 'small danger', 'data-key-id': k.id }, 'Revoke')
    revoke.onclick = () => {
      if (!confirm(`Revoke the key "${k.name}"? Requests with it are refused from now on.`)) return
      void act(revoke, slot, async () => { await api().apiKeys.delete(k.id); await load() })
    }
    const self = k.id === ctx.session.me.key_id
    return h('span', { class: 'row-actions' },
      h('label', null, 'grace (min) ', grace), rotate, self ? h('span', { class: 'help' }, ' (this key)') : revoke)
  }

  async function load (): Promise<void> {
    const page = await api().apiKeys.list({ limit: 100 })
    const columns = ['Name', 'Key', 'Permissions', 'Environment', 'Created', 'State', 'Actions']
    list.replaceChildren(table('API keys', columns, page.data.map((k) => [
      k.name, h('code', { class: 'nowrap' }, `${k.prefix}…${k.last4}`), k.permissions.join(', '), k.environment, timeEl(k.created_at),
      state(k), actions(k)
    ]), 'No keys.'))
  }

  const domains = await api().domains.list({ limit: 100 })
  const name = h('input', { id: 'key-name', required: true, maxlength: 100, placeholder: 'billing service' })
  const domain = h('select', { id: 'key-domain' },
    domains.data.map((d) => h('option', { value: d.id, selected: d.id === ctx.session.me.domain_id }, d.name)))
  const env = h('select', { id: 'key-env' },
    h('option', { value: 'live' }, 'live (sends real email)'), h('option', { value: 'test' }, 'test (sandbox)'))
  const perms = PERMISSIONS.map((p) => h('label', { class: 'check' },
    h('input', { type: 'checkbox', name: 'permissions', value: p, checked: p === 'send' }), ' ', p))
  const submit = h('button', { type: 'submit' }, 'Create key')
  const form = h('form', {
    class: 'card',
    onsubmit: (e: Event) => {
      e.preventDefault()
      const permissions = perms.map((l) => l.querySelector('input')!).filter((i) => i.checked)
        .map((i) => i.value) as Array<typeof PERMISSIONS[number]>
      void act(submit, created, async () => {
        const k = await api().apiKeys.create({
          name: name.value, domain_id: domain.value, permissions, environment: env.value as 'live' | 'test'
        })
        name.value = ''
        await load()
        slot.replaceChildren()
        showResult(created, `New key ${k.name}`, secretBox(`Key "${k.name}":`, k.key, 'new-key-value'))
      })
    }
  }, h('h2', null, 'Create an API key'),
  h('label', { for: 'key-name' }, 'Name'), name,
  h('label', { for: 'key-domain' }, 'Domain it sends from'), domain,
  h('label', { for: 'key-env' }, 'Environment'), env,
  h('fieldset', null, h('legend', null, 'Permissions'), perms),
  submit, created)
  await load()
  return h('section', null, h('h1', null, 'API keys'), slot, list, form)
}

export const keysView: ViewDef = { path: /^keys$/, title: 'API keys', nav: 'API keys', permission: 'manage', render }
