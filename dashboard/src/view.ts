import type { Session } from './session.ts'
import type { LiveFeed } from './live.ts'

export interface ViewContext {
  session: Session
  live: LiveFeed
  /** Path parameters of the route (`#/messages/<id>` → [id]). */
  params: string[]
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
  permission: 'read' | 'manage'
  render: (ctx: ViewContext) => Promise<Node>
}
