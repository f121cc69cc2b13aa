import { Type } from 'typebox'
import { isSuspended, type PlanName } from '../../protocol/mod.ts'
import { operatorRoute } from '../http/route.ts'
import { PageQuery, pageById, pageSchema } from '../http/pagination.ts'
import { operatorErrorResponses } from '../schemas/control.ts'
import {
  DeletedOrganization, OrganizationDetail, OrganizationView, PutPlanBody, ResetAdminKeyResult
} from '../schemas/organizations.ts'
import { countsByOrg, deleteOrganization, orgDetail, orgView, requireOrg, resetAdminKey } from '../control/org_admin.ts'

/**
 * The operator's organisation API: list and read organisations, set their plan, suspend and resume them, delete them,
 * and replace their admin key. Only operator keys reach it; the CLI (`outbox org …`) does the same through the same
 * writers (`cp.organizations`, gateway/control/org_admin.ts).
 */

const TAG = 'Operator'
const NO_ORG = 'No organisation with this id'

const ListQuery = Type.Object({
  ...PageQuery.properties,
  status: Type.Optional(Type.Enum(['active', 'suspended'], { description: 'Only organisations in this state' }))
})

const ZERO = { api_keys: 0, domains: 0, webhooks: 0 }

export const operatorOrganizationRoutes = [
  operatorRoute({
    method: 'get',
    path: '/v1/operator/organizations',
    permission: 'operator',
    summary: 'List the organisations, oldest first, with plan, status and counts of live keys, domains and webhooks',
    tag: TAG,
    query: ListQuery,
    responses: {
      200: { description: 'A page of organisations', schema: pageSchema(OrganizationView) },
      ...operatorErrorResponses({ validation_error: 'Bad limit, cursor or status' })
    },
    handler: ({ deps, query }) => {
      const status = query.get('status')
      const orgs = deps.cp.orgs.list().filter((o) => status === null || (status === 'suspended') === isSuspended(o))
      const counts = countsByOrg(deps.cp)
      const page = pageById(orgs, query, deps.config.api.listMaxBytes, (o) => orgView(o, deps.config, counts.get(o.id) ?? ZERO))
      return { status: 200, body: page }
    }
  }),
  operatorRoute({
    method: 'get',
    path: '/v1/operator/organizations/:id',
    idPrefix: 'org',
    permission: 'operator',
    summary: 'Read one organisation, with its domains and broadcast streams and the egress pool of each',
    tag: TAG,
    responses: { 200: { description: 'The organisation', schema: OrganizationDetail }, ...operatorErrorResponses({ not_found: NO_ORG }) },
    handler: ({ deps, params }) => ({ status: 200, body: orgDetail(deps.cp, deps.config, requireOrg(deps.cp, params.id!)) })
  }),
  operatorRoute<{ plan: PlanName, rate_limit_per_minute?: number }>({
    method: 'put',
    path: '/v1/operator/organizations/:id/plan',
    audit: { action: 'organization.plan_set', fields: ['plan', 'rate_limit_per_minute'] },
    idPrefix: 'org',
    permission: 'operator',
    summary: 'Set the organisation\'s plan (and an enterprise plan\'s own per-key limit); it applies from the next request',
    description: 'Raises and lowers alike; an organisation\'s admin may only lower its plan (`PATCH /v1/billing`).',
    tag: TAG,
    body: PutPlanBody,
    responses: {
      200: { description: 'The organisation after the change', schema: OrganizationDetail },
      ...operatorErrorResponses({
        validation_error: 'plan not one of free, starter, pro, enterprise; rate_limit_per_minute not 1 to 1000000, or given ' +
          'with another plan than enterprise',
        not_found: NO_ORG
      })
    },
    handler: async (ctx) => {
      const { deps, params, body } = ctx
      const org = await deps.cp.organizations.setPlan(params.id!, body)
      return { status: 200, body: orgDetail(deps.cp, deps.config, org) }
    }
  }),
  operatorRoute({
    method: 'post',
    path: '/v1/operator/organizations/:id/suspend',
    audit: { action: 'organization.suspended' },
    idPrefix: 'org',
    permission: 'operator',
    summary: 'Suspend an organisation: every key of it is refused until it is resumed; mail already queued is delivered',
    description: 'HTTP requests get 403 `organization_suspended`, SMTP submission `525 5.7.13` at AUTH (`550 5.7.13` in a ' +
      'session opened before), the live event stream closes with 4403. Suspending a suspended organisation changes nothing.',
    tag: TAG,
    responses: {
      200: { description: 'The organisation, suspended', schema: OrganizationDetail }, ...operatorErrorResponses({ not_found: NO_ORG })
    },
    handler: async (ctx) => {
      const org = await ctx.deps.cp.organizations.suspend(ctx.params.id!)
      return { status: 200, body: orgDetail(ctx.deps.cp, ctx.deps.config, org) }
    }
  }),
  operatorRoute({
    method: 'post',
    path: '/v1/operator/organizations/:id/resume',
    audit: { action: 'organization.resumed' },
    idPrefix: 'org',
    permission: 'operator',
    summary: 'Resume a suspended organisation: its keys work again from the next request',
    tag: TAG,
    responses: {
      200: { description: 'The organisation, active', schema: OrganizationDetail }, ...operatorErrorResponses({ not_found: NO_ORG })
    },
    handler: async (ctx) => {
      const org = await ctx.deps.cp.organizations.resume(ctx.params.id!)
      return { status: 200, body: orgDetail(ctx.deps.cp, ctx.deps.config, org) }
    }
  }),
  operatorRoute({
    method: 'post',
    path: '/v1/operator/organizations/:id/reset-admin-key',
    audit: {
      action: 'organization.admin_key_reset',
      detail: ({ reply }) => ({ api_key_id: reply.api_key_id, revoked_api_key_ids: reply.revoked })
    },
    idPrefix: 'org',
    permission: 'operator',
    summary: 'Give the organisation a new admin key, shown only here, and revoke every key that held admin',
    tag: TAG,
    responses: {
      201: { description: 'The new admin key', schema: ResetAdminKeyResult },
      ...operatorErrorResponses({ not_found: NO_ORG, unprocessable: 'The organisation has no domain to bind a key to' })
    },
    handler: async (ctx) => {
      const reset = await resetAdminKey(ctx.deps.cp, ctx.params.id!)
      return { status: 201, body: reset }
    }
  }),
  operatorRoute({
    method: 'del',
    path: '/v1/operator/organizations/:id',
    audit: { action: 'organization.deleted' },
    idPrefix: 'org',
    permission: 'operator',
    summary: 'Delete an organisation with its keys, domains, webhooks, inbound routes, templates and suppressions',
    description: 'Its keys stop working at once; its domain names are free for other organisations. Mail it had queued ' +
      'fails without an attempt (`domain_removed`); no webhook of it is left to be told.',
    tag: TAG,
    responses: { 200: { description: 'What was deleted', schema: DeletedOrganization }, ...operatorErrorResponses({ not_found: NO_ORG }) },
    handler: async (ctx) => {
      const deleted = await deleteOrganization(ctx.deps.cp, ctx.params.id!)
      return { status: 200, body: deleted }
    }
  })
]
