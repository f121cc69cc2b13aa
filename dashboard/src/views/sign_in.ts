import { h } from '../dom.ts'
import { showError } from '../errors.ts'

/** Sign-in with an API key. The key is checked with GET /v1/whoami and kept only in sessionStorage. */
export function signInView (submit: (key: string) => Promise<void>): HTMLElement {
  const input = h('input', {
    id: 'api-key',
    name: 'api-key',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    placeholder: 'ob_live_…',
    'aria-describedby': 'api-key-help'
  })
  const slot = h('div', { 'aria-live': 'polite' })
  const button = h('button', { type: 'submit' }, 'Sign in')
  const form = h('form', {
    class: 'card narrow',
    onsubmit: async (e: Event) => {
      e.preventDefault()
      button.disabled = true
      showError(slot, undefined)
      try { await submit(input.value) } catch (err) { showError(slot, err) } finally { button.disabled = false }
    }
  },
  h('h1', null, 'Sign in to Outbox'),
  h('label', { for: 'api-key' }, 'API key'),
  input,
  h('p', { id: 'api-key-help', class: 'help' }, 'The dashboard shows what this key may see. ' +
    'The key stays in this browser tab only (sessionStorage) and is sent only to this Outbox server.'),
  slot,
  button)
  queueMicrotask(() => input.focus())
  return form
}
