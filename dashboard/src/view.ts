import type { Session } from './session.ts'
import type { LiveFeed } from './live.ts'

export interface ViewContext {
  session: Session
  live: LiveFeed
  /** Path parameters of the route (`#/messages/<id>` → [id]). */
  params: string[]
  /** The route's query (`#/activity?status=bounced` → status=bounced): a view's filters, kept in the address. */
  query: URLSearchParams
  /**
   * Puts the view's filters in the address as a new history entry (no new render): the address can be reloaded or
   * shared, and back and forward return to earlier filters.
   */
  setQuery: (query: URLSearchParams) => void
  /** Registers clean-up for when the user navigates away. */
  onLeave: (fn: () => void) => void
  /** Signs the session in with another value of the same key (after rotating it) and restarts the live feed. */
  switchKey: (key: string) => Promise<void>
}

export interface ViewDef {
  path: RegExp
  title: string
  /** Shown in the navigation under this label (omitted: not in the navigation). */
  nav?: string
  /** `operator`: only an operator key (ob_op_…) sees the view, and such a key sees no other. */
  permission: 'read' | 'manage' | 'operator'
  render: (ctx: ViewContext) => Promise<Node>
}
