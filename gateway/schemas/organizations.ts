import { Type } from 'typebox'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../stores/control_plane/mod.ts'
import { Timestamp } from './control.ts'

/** Request and response records of the operator's organisation API (gateway/routes/operator_orgs_v1.ts). */

export const PlanName = Type.Enum(['free', 'starter', 'pro', 'enterprise'])

export const PutPlanBody = Type.Object({
  plan: PlanName,
  rate_limit_per_minute: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: MAX_RATE_LIMIT_PER_MINUTE,
    description: 'Requests a minute per key; only with the plan enterprise (left out: OB_ENTERPRISE_RATE_LIMIT)'
  }))
}, { additionalProperties: false })

const Counts = Type.Object({
  api_keys: Type.Integer({ description: 'Keys that authenticate now (neither revoked nor past a rotation\'s grace period)' }),
  domains: Type.Integer(),
  webhooks: Type.Integer()
})

export const OrganizationView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  plan: PlanName,
  rate_limit_per_minute: Type.Integer({ description: 'The per-key limit the plan gives now' }),
  status: Type.Enum(['active', 'suspended']),
  suspended_at: Type.Optional(Timestamp),
  egress_pool: Type.String(),
  created_at: Timestamp,
  counts: Counts
})

export const OrganizationDetail = Type.Object({
  ...OrganizationView.properties,
  domains: Type.Array(Type.Object({
    id: Type.String(),
    name: Type.String(),
    status: Type.Enum(['pending', 'verified', 'lapsed']),
    egress_pool: Type.Union([Type.String(), Type.Null()], { description: 'The domain\'s own egress pool; null: the organisation\'s' })
  })),
  streams: Type.Array(Type.Object({
    id: Type.String(),
    egress_pool: Type.Union([Type.String(), Type.Null()], { description: 'The stream\'s own egress pool; null: its domain\'s' })
  }), { description: 'The organisation\'s broadcast message streams (transactional is every organisation\'s and takes no pool)' })
})

export const DeletedOrganization = Type.Object({
  organization_id: Type.String(),
  deleted: Type.Object({
    api_keys: Type.Integer(),
    webhooks: Type.Integer(),
    inbound_routes: Type.Integer(),
    templates: Type.Integer(),
    suppressions: Type.Integer(),
    domains: Type.Integer()
  }, { description: 'How many of each record went' })
})

export const ResetAdminKeyResult = Type.Object({
  organization_id: Type.String(),
  api_key_id: Type.String(),
  api_key: Type.String({ description: 'The new admin key (ob_live_…); shown only in this response' }),
  domain_id: Type.String({ description: 'The domain the key sends from' }),
  revoked: Type.Array(Type.String(), { description: 'Ids of the admin keys that stopped working' })
})
