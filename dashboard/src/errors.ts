import { OutboxApiError, OutboxConnectionError } from '../../client/src/mod.ts'
import { h, reveal } from './dom.ts'

/** An API error as the API words it: `error.message`, then each `error.errors[]` field and message. */
export function errorBox (err: unknown): HTMLElement {
  if (err instanceof OutboxApiError) {
    return h('div', { class: 'error', role: 'alert' },
      h('p', { class: 'error-message' }, err.message),
      err.errors.length > 0 && h('ul', null, err.errors.map((e) => h('li', null, h('code', null, e.field), ': ', e.message))),
      err.field !== undefined && err.errors.length === 0 && h('p', null, 'Field: ', h('code', null, err.field)),
      h('p', { class: 'meta' }, `${err.status} ${err.code}`,
        err.retryAfter !== undefined ? ` · retry after ${err.retryAfter} s` : '',
        err.requestId !== undefined ? ` · request ${err.requestId}` : ''))
  }
  const message = err instanceof OutboxConnectionError ? 'The Outbox API cannot be reached.' : (err as Error)?.message ?? String(err)
  return h('div', { class: 'error', role: 'alert' }, h('p', { class: 'error-message' }, message))
}

/** Replaces the contents of `slot` with the error (or clears it when `err` is undefined). */
export function showError (slot: HTMLElement, err: unknown): void {
  slot.replaceChildren(...(err === undefined ? [] : [errorBox(err)]))
}

/**
 * Runs an action from a button: disables it meanwhile, shows the API's error in `slot` (best placed next to the
 * button), focused and scrolled into view.
 */
export async function act (button: HTMLButtonElement | null, slot: HTMLElement, fn: () => Promise<void>): Promise<void> {
  if (button !== null) button.disabled = true
  showError(slot, undefined)
  try {
    await fn()
  } catch (err) {
    showError(slot, err)
    if (slot.firstElementChild instanceof HTMLElement && slot.isConnected) reveal(slot.firstElementChild)
  } finally {
    if (button !== null) button.disabled = false
  }
}
