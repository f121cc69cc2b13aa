import type { AuditActor, AuditRecord } from '../stores/audit/mod.ts'
import type { AuditDecl, AuditNote, AuditView, Method } from './http/route.ts'

/**
 * The audit entry of a change, built from its route's `audit` declaration and from who made it. One builder for the
 * two ways a change is made: an HTTP request (gateway/audit.ts) and the operator's command line, which records the
 * entry of the operator route it does the work of (cli/audit_trail.ts). So both name the same action, target and
 * changes.
 */

/** What an entry takes from its route besides the declaration: whose route it is, and its path. */
export interface AuditedRoute {
  path: string
  permission: string | null
}

/** Who made a change, and from where: what an entry takes from its caller rather than from the route. */
export interface ChangeOrigin {
  actor: AuditActor
  /** The client address of a request; the host name of the machine a command ran on. */
  address: string
  requestId: string
  /** The organisation of the key that made the change; unset for the operator, whose route names it (or none). */
  orgId?: string
}

export function emptyNote (): AuditNote {
  return { changes: {} }
}

/** `POST /v1/domains`: how a route is named in AUDIT_EXEMPT and in the command line's table of routes. */
export function routeLabel (def: { method: Method, path: string }): string {
  return `${def.method === 'del' ? 'DELETE' : def.method.toUpperCase()} ${def.path}`
}

/** The entry of a change `decl` (the route's `audit`) declares; `note` is what its handler added (none: emptyNote()). */
export function auditEntryOf (
  route: AuditedRoute, decl: AuditDecl, view: AuditView, note: AuditNote, origin: ChangeOrigin
): AuditRecord {
  const operator = route.permission === 'operator'
  const orgOfPath = operator && route.path.startsWith('/v1/operator/organizations/:id') ? view.params.id : undefined
  const changes: Record<string, unknown> = {}
  const body = view.body as Record<string, unknown> | undefined
  for (const f of decl.fields ?? []) if (body !== undefined && body !== null && body[f] !== undefined) changes[f] = body[f]
  Object.assign(changes, decl.detail?.(view) ?? {}, note.changes)
  return {
    org_id: operator ? (note.orgId ?? orgOfPath ?? null) : (origin.orgId ?? null),
    actor: origin.actor,
    address: origin.address,
    action: note.action ?? decl.action,
    target: note.target ?? decl.target?.(view) ?? defaultTarget(view.params, view.reply, orgOfPath !== undefined),
    changes,
    count: note.count ?? 1,
    request_id: origin.requestId
  }
}

/** The path's own id (`:domain_id`, `:id`, `:name`, `:email`), else the id of what the answer created. */
function defaultTarget (params: Readonly<Record<string, string>>, answer: unknown, idIsOrg: boolean): string | null {
  const fromPath = params.domain_id ?? (idIsOrg ? undefined : params.id) ?? params.name ?? params.email
  if (fromPath !== undefined) return fromPath
  if (idIsOrg) return null
  const id = (answer as { id?: unknown } | undefined)?.id
  return typeof id === 'string' ? id : null
}
