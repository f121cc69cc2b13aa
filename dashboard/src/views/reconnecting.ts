import { h } from '../dom.ts'
import { errorBox } from '../errors.ts'

export interface ReconnectingState {
  attempt: number
  error: unknown
  /** When the next attempt starts (ms since the epoch); undefined: only on "Try again". */
  nextAt?: number
}

/**
 * Shown on reload while the stored key cannot be checked: the API is unreachable or answered something other than
 * 401. The key is kept; the user may try at once or sign out.
 */
export function reconnectingView (state: ReconnectingState, retryNow: () => void, signOut: () => void): HTMLElement {
  const seconds = state.nextAt === undefined ? undefined : Math.max(1, Math.round((state.nextAt - Date.now()) / 1000))
  return h('section', { class: 'card narrow', 'data-testid': 'reconnecting' },
    h('h1', null, state.nextAt === undefined ? 'Cannot check your key' : 'Reconnecting…'),
    h('p', { role: 'status' }, seconds === undefined
      ? 'The Outbox API refused to describe this key. You stay signed in; try again, or sign out.'
      : `The Outbox API did not answer as expected. You stay signed in; trying again in ${seconds} s (attempt ${state.attempt}).`),
    errorBox(state.error),
    h('p', { class: 'row-actions' },
      h('button', { type: 'button', onclick: retryNow }, 'Try again now'),
      h('button', { type: 'button', class: 'secondary', onclick: signOut }, 'Sign out')))
}
