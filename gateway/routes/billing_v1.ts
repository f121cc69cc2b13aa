import { Type } from 'typebox'
import { ApiError, type OrgRecord, type PlanName } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { planLimit } from '../server.ts'
import { BillingView, errorResponses } from '../schemas/control.ts'

const PatchBillingBody = Type.Object({
  plan: Type.Enum(['free', 'starter', 'pro', 'enterprise'], {
    description: 'free 60, starter 300, pro 1000 requests per minute per key; enterprise as set by the operator'
  })
}, { additionalProperties: false })

const TAG = 'Billing'

function billingView (org: OrgRecord, enterpriseDefault: number): { plan: PlanName, rate_limit_per_minute: number } {
  return { plan: org.plan, rate_limit_per_minute: planLimit(org, enterpriseDefault) }
}

export const billingRoutes = [
  route({
    method: 'get',
    path: '/v1/billing',
    permission: 'admin',
    summary: 'The organisation\'s plan and per-key rate limit',
    tag: TAG,
    responses: { 200: { description: 'Plan and limit', schema: BillingView }, ...errorResponses({ forbidden: 'The key lacks admin' }) },
    handler: ({ deps, auth }) => ({
      status: 200, body: billingView(deps.cp.orgs.get(auth.org.id) ?? auth.org, deps.config.plans.enterpriseRateLimit)
    })
  }),
  route<{ plan: PlanName }>({
    method: 'patch',
    path: '/v1/billing',
    permission: 'admin',
    summary: 'Change the plan; the new rate limit applies from the next request',
    tag: TAG,
    body: PatchBillingBody,
    responses: {
      200: { description: 'Plan and limit after the change', schema: BillingView },
      ...errorResponses({ validation_error: 'plan missing or not one of free, starter, pro, enterprise', forbidden: 'The key lacks admin' })
    },
    handler: async ({ deps, auth, body }) => {
      // The limiter's Redis key contains the limit, so the next request of every key starts a bucket of the new size.
      const org = await deps.cp.orgs.modify(auth.org.id, (cur) => (cur.plan === body.plan ? undefined : { ...cur, plan: body.plan }))
      if (org === undefined) throw new ApiError('not_found', 'The organisation no longer exists.')
      return { status: 200, body: billingView(org, deps.config.plans.enterpriseRateLimit) }
    }
  })
]
