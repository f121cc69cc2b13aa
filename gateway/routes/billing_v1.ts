import { Type } from 'typebox'
import { ApiError, type OrgRecord, type PlanName } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { planLimit } from '../server.ts'
import { planRank } from '../../stores/control_plane/mod.ts'
import { BillingView, errorResponses } from '../schemas/control.ts'

const PatchBillingBody = Type.Object({
  plan: Type.Enum(['free', 'starter', 'pro', 'enterprise'], {
    description: 'free 60, starter 300, pro 1000 requests per minute per key; enterprise as set by the operator. ' +
      'The current plan or a lower one'
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
    audit: { action: 'organization.plan_set', fields: ['plan'] },
    permission: 'admin',
    summary: 'Lower the plan; raising it is the operator\'s (PUT /v1/operator/organizations/{id}/plan)',
    description: 'The same plan changes nothing. A plan above the current one, or one whose per-key limit is above the ' +
      'current limit (pro from an enterprise plan of a lower limit), is 403 `forbidden`: plans are raised by the operator.',
    tag: TAG,
    body: PatchBillingBody,
    responses: {
      200: { description: 'Plan and limit after the change', schema: BillingView },
      ...errorResponses({
        validation_error: 'plan missing or not one of free, starter, pro, enterprise',
        forbidden: 'The key lacks admin, or the plan asked for is a raise, which only the operator makes'
      })
    },
    handler: async ({ deps, auth, body }) => {
      const current = deps.cp.orgs.get(auth.org.id) ?? auth.org
      const enterpriseDefault = deps.config.plans.enterpriseRateLimit
      const asked: OrgRecord = { ...current, plan: body.plan }
      if (planRank(body.plan) > planRank(current.plan) || planLimit(asked, enterpriseDefault) > planLimit(current, enterpriseDefault)) {
        const why = `Only the operator of this installation raises a plan; this key may keep ${current.plan} or lower it.`
        throw new ApiError('forbidden', why, { details: { plan: current.plan, requested: body.plan } })
      }
      // The limiter's Redis key contains the limit, so the next request of every key starts a bucket of the new size.
      const org = await deps.cp.organizations.setPlan(auth.org.id, {
        plan: body.plan,
        ...(body.plan === 'enterprise' && current.rate_limit_per_minute !== undefined
          ? { rate_limit_per_minute: current.rate_limit_per_minute }
          : {})
      })
      return { status: 200, body: billingView(org, enterpriseDefault) }
    }
  })
]
