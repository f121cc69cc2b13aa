import type { Logger } from 'pino'
import type { OperatorRequestContext } from './http/route.ts'
import { presentedKeyPrefix } from './auth.ts'

/**
 * The security log: one JSON line per event an audit asks about, on the process's log, each with
 * `kind: "security"` and an `event` name. Lines carry ids (organisation, the acting key, the record changed),
 * the client address and at most a key's 12-character display prefix (the one the API lists): never a key value,
 * a webhook secret or URL (a URL may carry a token), or a request body. This module is the only place the lines
 * are shaped; docs/security.md lists them. The lines of configuration changes are written from the change's audit
 * log entry (audit_security.ts), by the call that records it.
 */

/** Changes to what can authenticate or where an organisation's data goes. */
export type SecurityChange =
  | 'api_key.created' | 'api_key.rotated' | 'api_key.revoked'
  | 'webhook.created' | 'webhook.updated' | 'webhook.deleted' | 'webhook.secret_rotated'
  | 'inbound_route.created' | 'inbound_route.deleted'

/** Who made a change: the authenticated key of the request, and where it came from. */
export interface SecurityActor { orgId: string, keyId: string, address: string }

/** Ids and non-secret facts of the record changed; the field set is closed so nothing else slips in. */
export interface ChangeTarget {
  api_key_id?: string
  /** Rotation: the key that replaces `api_key_id`. */
  new_api_key_id?: string
  permissions?: readonly string[]
  environment?: string
  /** Rotation: when the old key (or webhook secret) stops working. */
  expires_at?: string
  webhook_id?: string
  /** The webhook URL's host only. */
  host?: string
  /** A webhook URL changed to another host: the host before (host only, like `host`). */
  previous_host?: string
  events?: readonly string[]
  /** A webhook's filters: tags, domain names and environment (no URL, nothing secret). */
  filters?: Readonly<Record<string, unknown>>
  status?: string
  route_id?: string
  match?: string
}

/** Changes the operator API makes to the egress configuration: which addresses mail leaves from. */
export type EgressChange =
  | 'source.created' | 'source.updated' | 'source.deleted' | 'pool.set' | 'pool.deleted' | 'limits.set'
  | 'organization.pool_assigned' | 'domain.pool_assigned' | 'stream.pool_assigned'

/** What an egress change touched: names and ids only. */
export interface EgressChangeTarget {
  name?: string
  org_id?: string
  domain_id?: string
  /** A broadcast stream's id (unique within its organisation, `org_id`). */
  stream?: string
  /** An assignment: the pool assigned, or null when the assignment was removed. */
  pool?: string | null
}

/** What the operator API did to an organisation as a whole. */
export type OrganizationChange = 'plan_set' | 'suspended' | 'resumed' | 'deleted' | 'admin_key_reset'

/** Ids and the plan only. */
export interface OrganizationChangeTarget {
  org_id: string
  plan?: string
  /** `admin_key_reset`: the new admin key. */
  api_key_id?: string
  /** `admin_key_reset`: the admin keys revoked. */
  revoked_api_key_ids?: readonly string[]
}

/** What operators do to waiting mail (protocol/queues.ts). */
export type QueueAction = 'hold' | 'release' | 'retry' | 'bounce'

/** What a queue action touched: the selector, and for an order its id and what it woke. */
export interface QueueActionTarget {
  by: string
  value: string
  order_id?: string
  only_held?: boolean
  woken?: number
  reason?: string
}

export type AuthTransport = 'http' | 'websocket' | 'smtp'

export class SecurityLog {
  private readonly log: Logger

  constructor (log: Logger) {
    this.log = log.child({ kind: 'security' })
  }

  /**
   * A request or socket that presented no valid key (`credential`: its Authorization value, `Bearer …`); `reason` is the answer's
   * message, which names no key.
   */
  authFailed (f: { transport: AuthTransport, address: string, credential: string, reason: string }): void {
    const prefix = presentedKeyPrefix(f.credential)
    this.log.warn({
      event: 'auth.failed',
      transport: f.transport,
      address: f.address,
      ...(prefix !== undefined ? { key_prefix: prefix } : {}),
      reason: f.reason
    }, 'authentication failed')
  }

  change (event: SecurityChange, actor: SecurityActor, target: ChangeTarget): void {
    this.log.info({ event, org_id: actor.orgId, actor_key_id: actor.keyId, address: actor.address, ...target }, event)
  }

  /** A change of the egress configuration through the operator API, with the operator key that made it. */
  egressChanged (change: EgressChange, ctx: Pick<OperatorRequestContext, 'operator' | 'ip'>, target: EgressChangeTarget): void {
    const event = 'operator.egress_changed'
    this.log.info({ event, change, operator_key_id: ctx.operator.key.id, address: ctx.ip, ...target }, event)
  }

  /** A change the operator API made to an organisation: its plan, suspension, deletion or admin key. */
  organizationChanged (
    change: OrganizationChange, ctx: Pick<OperatorRequestContext, 'operator' | 'ip'>, target: OrganizationChangeTarget
  ): void {
    const event = 'operator.organization_changed'
    this.log.info({ event, change, operator_key_id: ctx.operator.key.id, address: ctx.ip, ...target }, event)
  }

  /** An operator's hold, release, retry or bounce of waiting mail, with the operator key (id and name) that did it. */
  queueChanged (action: QueueAction, ctx: Pick<OperatorRequestContext, 'operator' | 'ip'>, target: QueueActionTarget): void {
    const event = 'operator.queue_changed'
    this.log.info({
      event, action, operator_key_id: ctx.operator.key.id, operator_key_name: ctx.operator.key.name, address: ctx.ip, ...target
    }, event)
  }
}
