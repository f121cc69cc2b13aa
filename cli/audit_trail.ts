import { hostname, userInfo } from 'node:os'
import { newId } from '../protocol/mod.ts'
import type { AuditLog, AuditRecord } from '../stores/audit/mod.ts'
import { auditEntryOf, emptyNote, routeLabel, type ChangeOrigin } from '../gateway/audit_entry.ts'
import type { AuditView, OperatorRouteDef } from '../gateway/http/route.ts'
import { operatorOrganizationRoutes } from '../gateway/routes/operator_orgs_v1.ts'
import { operatorEgressRoutes } from '../gateway/routes/operator_egress_v1.ts'
import { operatorEgressLimitRoutes } from '../gateway/routes/operator_egress_limits_v1.ts'

/**
 * The audit entries of the operator's command line. A command that does the work of an operator route records that
 * route's own entry (its action, target and changes, from its `audit` declaration), so a change reads the same in
 * the audit log whichever way it was made; one that no route does (keys of the installation, a new organisation)
 * records its own action, in the same shape. The actor is the operator through the command line: it holds no
 * operator key, so the entry names the local user (`cli:<name>`, as queue holds do) and the host it ran on.
 */

/** Each command that does an operator route's work, and that route (as AUDIT_EXEMPT names routes). */
export const CLI_ROUTES = {
  'org plan': 'PUT /v1/operator/organizations/:id/plan',
  'org suspend': 'POST /v1/operator/organizations/:id/suspend',
  'org resume': 'POST /v1/operator/organizations/:id/resume',
  'org reset-admin-key': 'POST /v1/operator/organizations/:id/reset-admin-key',
  'org delete': 'DELETE /v1/operator/organizations/:id',
  'egress source add': 'POST /v1/operator/egress/sources',
  'egress source remove': 'DELETE /v1/operator/egress/sources/:name',
  'egress pool set': 'PUT /v1/operator/egress/pools/:name',
  'egress pool remove': 'DELETE /v1/operator/egress/pools/:name',
  'egress assign --org': 'PUT /v1/operator/organizations/:id/egress-pool',
  'egress assign --domain': 'PUT /v1/operator/organizations/:id/domains/:domain_id/egress-pool',
  'egress assign --stream': 'PUT /v1/operator/organizations/:id/streams/:stream/egress-pool',
  'egress limits set': 'PUT /v1/operator/egress/limits',
  'egress limits set --source': 'PUT /v1/operator/egress/sources/:name/limits'
} as const

/** Changes only the command line makes, and their actions. */
export const CLI_ACTIONS = {
  'org create': 'organization.created',
  'operator key create': 'operator_key.created',
  'operator key revoke': 'operator_key.revoked',
  'verp-keys rotate': 'verp_key.rotated',
  'verp-keys retire': 'verp_key.retired'
} as const

export type RoutedCommand = keyof typeof CLI_ROUTES
export type CliOnlyCommand = keyof typeof CLI_ACTIONS

const OPERATOR_ROUTES: ReadonlyMap<string, OperatorRouteDef> = new Map(
  [...operatorOrganizationRoutes, ...operatorEgressRoutes, ...operatorEgressLimitRoutes].map((r) => [routeLabel(r), r])
)

/** The operator route a command does the work of; a unit test finds each one, with an `audit` declaration. */
export function routeOf (command: RoutedCommand): OperatorRouteDef | undefined {
  return OPERATOR_ROUTES.get(CLI_ROUTES[command])
}

/** The name of the local user running the command line. */
export function localUserName (): string {
  try {
    return userInfo().username
  } catch {
    return 'unknown' // a system without a user database entry for the process's user
  }
}

/** The operator through the command line, on this host; one request id per command run. */
export function cliOrigin (): ChangeOrigin {
  return { actor: { type: 'operator', id: `cli:${localUserName()}`, via: 'cli' }, address: hostname(), requestId: newId('req') }
}

/**
 * Records the entries of one command run. A failure to build or store an entry is never thrown: the change is
 * made and its result printed, as the gateway answers a change whose entry it could not store; the whole entry is
 * written to stderr as a security line (`audit.unrecorded`) instead, so no change goes unrecorded silently.
 */
export class CliAuditTrail {
  private log: Promise<AuditLog> | undefined

  constructor (
    private readonly openLog: () => Promise<AuditLog>,
    private readonly origin: ChangeOrigin = cliOrigin(),
    private readonly say: (line: string) => void = (line) => { process.stderr.write(line + '\n') }
  ) {}

  /** The entry `command`'s operator route records for a request with these path parameters, body and answer. */
  async asRoute (command: RoutedCommand, view: Partial<AuditView>): Promise<void> {
    await this.record(command, () => {
      const route = routeOf(command)
      if (route?.audit === undefined) throw new Error(`${CLI_ROUTES[command]} records no audit entry`)
      const full: AuditView = { params: view.params ?? {}, body: view.body, reply: view.reply }
      return auditEntryOf(route, route.audit, full, emptyNote(), this.origin)
    })
  }

  /** The entry of a change no route makes: `org_id` null for the installation as a whole. */
  async cliOnly (
    command: CliOnlyCommand, what: { org_id: string | null, target: string | null, changes?: Record<string, unknown> }
  ): Promise<void> {
    await this.record(command, () => ({
      org_id: what.org_id,
      actor: this.origin.actor,
      address: this.origin.address,
      action: CLI_ACTIONS[command],
      target: what.target,
      changes: what.changes ?? {},
      count: 1,
      request_id: this.origin.requestId
    }))
  }

  private async record (command: string, build: () => AuditRecord): Promise<void> {
    let entry: AuditRecord | undefined
    try {
      entry = build()
      this.log ??= this.openLog()
      await (await this.log).record(entry)
    } catch (err) {
      const known = entry ?? { command, request_id: this.origin.requestId, address: this.origin.address }
      this.say(JSON.stringify({ kind: 'security', event: 'audit.unrecorded', err: (err as Error).message, entry: known }))
    }
  }
}
