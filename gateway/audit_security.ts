import type { AuditRecord } from '../stores/audit/mod.ts'
import type { OperatorContext } from './auth.ts'
import type { EgressChange, OrganizationChange, SecurityChange, SecurityLog } from './security_log.ts'

/**
 * The security log line of an audit entry, for the changes docs/security.md lists: the audit entry is the one
 * record of a change, and this line is shaped from it by the same call, so the two never disagree.
 */

const ORG_LINES: Readonly<Record<string, SecurityChange>> = {
  'api_key.created': 'api_key.created',
  'api_key.rotated': 'api_key.rotated',
  'api_key.revoked': 'api_key.revoked',
  'webhook.created': 'webhook.created',
  'webhook.updated': 'webhook.updated',
  'webhook.deleted': 'webhook.deleted',
  'webhook.secret_rotated': 'webhook.secret_rotated',
  'inbound_route.created': 'inbound_route.created',
  'inbound_route.deleted': 'inbound_route.deleted'
}

const EGRESS_LINES: Readonly<Record<string, EgressChange>> = {
  'egress.source_created': 'source.created',
  'egress.source_updated': 'source.updated',
  'egress.source_deleted': 'source.deleted',
  'egress.pool_set': 'pool.set',
  'egress.pool_deleted': 'pool.deleted',
  'egress.limits_set': 'limits.set',
  'egress.source_limits_set': 'limits.set',
  'organization.egress_pool_set': 'organization.pool_assigned',
  'domain.egress_pool_set': 'domain.pool_assigned',
  'stream.egress_pool_set': 'stream.pool_assigned'
}

const OPERATOR_ORG_LINES: Readonly<Record<string, OrganizationChange>> = {
  'organization.plan_set': 'plan_set',
  'organization.suspended': 'suspended',
  'organization.resumed': 'resumed',
  'organization.admin_key_reset': 'admin_key_reset',
  'organization.deleted': 'deleted'
}

/** Writes the security line of `e`, if its action has one; `operator` is the operator key of an operator route. */
export function securityLineOf (log: SecurityLog, e: AuditRecord, operator: OperatorContext | undefined): void {
  const c = e.changes as Record<string, any>
  const target = e.target ?? undefined
  if (operator === undefined) {
    const event = ORG_LINES[e.action]
    if (event === undefined || e.org_id === null) return
    const kind = event.split('.')[0]
    const id = kind === 'api_key' ? { api_key_id: target } : kind === 'webhook' ? { webhook_id: target } : { route_id: target }
    log.change(event, { orgId: e.org_id, keyId: e.actor.id, address: e.address }, {
      ...id,
      permissions: c.permissions,
      environment: c.environment,
      new_api_key_id: c.new_api_key_id,
      expires_at: c.old_key_expires_at ?? c.previous_secret_expires_at,
      host: c.host,
      previous_host: c.previous_host,
      filters: c.filters,
      events: c.events,
      status: c.status,
      match: c.match
    })
    return
  }
  const ctx = { operator, ip: e.address }
  const egress = EGRESS_LINES[e.action]
  if (egress !== undefined) {
    const assignment = egress === 'organization.pool_assigned' || egress === 'domain.pool_assigned' || egress === 'stream.pool_assigned'
    const assigned = egress === 'domain.pool_assigned' ? { domain_id: target } : egress === 'stream.pool_assigned' ? { stream: target } : {}
    log.egressChanged(egress, ctx, assignment
      ? { org_id: e.org_id ?? undefined, ...assigned, pool: c.pool ?? null }
      : { name: target })
    return
  }
  const change = OPERATOR_ORG_LINES[e.action]
  if (change === undefined || e.org_id === null) return
  log.organizationChanged(change, ctx, {
    org_id: e.org_id, plan: c.plan, api_key_id: c.api_key_id, revoked_api_key_ids: c.revoked_api_key_ids
  })
}
