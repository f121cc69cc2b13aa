import { Type } from 'typebox'
import {
  EGRESS_NAME_PATTERN, LIMIT_BOUNDS, MAX_EHLO_LENGTH, MAX_LIMIT_ENTRIES, MAX_POOL_SOURCES, MAX_WARMUP_DAY, MAX_WARMUP_PER_DAY,
  MAX_WARMUP_STEPS, POOL_WEIGHT_MAX, POOL_WEIGHT_MIN, PROVIDER_KEY_PATTERN, TLS_MODES
} from '../../protocol/mod.ts'
import { Timestamp } from './control.ts'

/**
 * Request and response records of the operator's egress API. The bounds come from protocol/egress/records.ts, whose
 * checks (address literal, host name, sources that exist) run again in the one writer, for the CLI as well.
 */

export const EgressName = Type.String({
  pattern: EGRESS_NAME_PATTERN,
  maxLength: 32,
  errorMessage: 'must be lower-case letters, digits and hyphens, at most 32, not starting with a hyphen'
})

const WarmupStep = Type.Object({
  day: Type.Integer({
    minimum: 1, maximum: MAX_WARMUP_DAY, description: 'The warm-up day from which this step applies: day 1 is the UTC day of started_at'
  }),
  perDay: Type.Integer({ minimum: 1, maximum: MAX_WARMUP_PER_DAY }),
  perHour: Type.Integer({ minimum: 1, maximum: MAX_WARMUP_PER_DAY })
}, { additionalProperties: false })

export const Warmup = Type.Object({
  started_at: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601; default: now' })),
  steps: Type.Optional(Type.Array(WarmupStep, {
    minItems: 1, maxItems: MAX_WARMUP_STEPS, description: 'Allowance per provider from each day on; default: the built-in curve'
  }))
}, { additionalProperties: false })

const Address = Type.String({ minLength: 2, maxLength: 45, description: 'An IPv4 or IPv6 literal this host owns' })
const Ehlo = Type.String({ minLength: 3, maxLength: MAX_EHLO_LENGTH, description: 'The host name the address\'s reverse DNS gives' })

const Limit = (k: keyof typeof LIMIT_BOUNDS) => Type.Optional(Type.Integer({ minimum: LIMIT_BOUNDS[k].min, maximum: LIMIT_BOUNDS[k].max }))

export const LimitOverride = Type.Object({
  maxConnections: Limit('maxConnections'),
  messagesPerConnection: Limit('messagesPerConnection'),
  messagesPerMinute: Limit('messagesPerMinute'),
  tls: Type.Optional(Type.Enum([...TLS_MODES]))
}, { additionalProperties: false })

export const Limits = Type.Record(Type.String({ pattern: PROVIDER_KEY_PATTERN }), LimitOverride, {
  maxProperties: MAX_LIMIT_ENTRIES,
  description: 'Provider id (google, microsoft, …), site (site:<mx names>) or default → limits replacing the built-in ones'
})

export const CreateSourceBody = Type.Object({
  name: EgressName, address: Address, ehlo: Ehlo, warmup: Type.Optional(Warmup)
}, { additionalProperties: false })

export const PatchSourceBody = Type.Object({
  address: Type.Optional(Address),
  ehlo: Type.Optional(Ehlo),
  warmup: Type.Optional(Type.Union([Warmup, Type.Null()], { description: 'null ends the warm-up' }))
}, { additionalProperties: false, minProperties: 1 })

export const SourceView = Type.Object({
  name: Type.String(),
  address: Type.String(),
  ehlo: Type.String(),
  warmup: Type.Optional(Type.Object({ started_at: Timestamp, steps: Type.Optional(Type.Array(WarmupStep)) })),
  limits: Type.Optional(Type.Record(Type.String(), LimitOverride, {
    description: 'The source\'s own limit overrides per provider, over the installation\'s (PUT …/sources/{name}/limits)'
  })),
  created_at: Timestamp,
  updated_at: Timestamp
})

export const RemovedSource = Type.Object({
  name: Type.String(),
  removed_from_pools: Type.Array(Type.String(), { description: 'The pools the source was taken out of before it was deleted' })
})

const PoolMember = Type.Object({
  source: EgressName,
  weight: Type.Optional(Type.Integer({ minimum: POOL_WEIGHT_MIN, maximum: POOL_WEIGHT_MAX, description: 'Default 100' }))
}, { additionalProperties: false })

const PoolMembers = Type.Array(PoolMember, { maxItems: MAX_POOL_SOURCES, description: 'At least one, except for the pool default' })

export const CreatePoolBody = Type.Object({ name: EgressName, sources: PoolMembers }, { additionalProperties: false })
export const PutPoolBody = Type.Object({ sources: PoolMembers }, { additionalProperties: false })

export const PoolView = Type.Object({
  name: Type.String(),
  sources: Type.Array(Type.Object({ source: Type.String(), weight: Type.Integer() })),
  implicit: Type.Boolean({ description: 'true for default while no record exists: no sources, the host\'s own address' }),
  created_at: Type.Optional(Timestamp),
  updated_at: Type.Optional(Timestamp)
})

export const LimitsBody = Type.Object({ limits: Limits }, { additionalProperties: false })

export const SourceLimitsView = Type.Object({
  source: Type.String(),
  limits: Type.Record(Type.String(), LimitOverride, {
    description: 'Provider id, site or default (sites) → limits for this source\'s lanes only, over the installation\'s overrides'
  })
})

export const PoolAssignmentBody = Type.Object({
  pool: Type.Union([EgressName, Type.Null()], { description: 'A pool name (default included), or null to remove the assignment' })
}, { additionalProperties: false })

export const OrgAssignmentView = Type.Object({
  organization_id: Type.String(),
  egress_pool: Type.String({ description: 'The organisation\'s pool (default when none is assigned)' })
})

export const DomainAssignmentView = Type.Object({
  organization_id: Type.String(),
  domain_id: Type.String(),
  egress_pool: Type.Union([Type.String(), Type.Null()], { description: 'The domain\'s own pool, or null: its organisation\'s applies' }),
  effective_pool: Type.String({ description: 'The pool its mail leaves from: its own, else its organisation\'s, else default' })
})

export const StreamAssignmentView = Type.Object({
  organization_id: Type.String(),
  stream: Type.String({ description: 'The broadcast stream\'s id' }),
  egress_pool: Type.Union([Type.String(), Type.Null()], {
    description: 'The stream\'s own pool, or null: its domain\'s (else its organisation\'s) applies'
  })
})

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()])

export const LaneView = Type.Object({
  lane: Type.String({ description: '<source>|<provider>' }),
  source: Type.String({ description: 'A source name, or host for the host\'s own address' }),
  provider: Type.String({ description: 'A provider id (google, microsoft, …) or site:<mx host names>' }),
  limits: Type.Object({
    maxConnections: Type.Integer(), messagesPerConnection: Type.Integer(), messagesPerMinute: Type.Integer(),
    tls: Type.Enum([...TLS_MODES])
  }, { description: 'The limits that apply: built-in, replaced by the operator\'s overrides' }),
  connections: Type.Integer({ description: 'Connections open from the source to the provider now, across the cluster' }),
  messages_per_minute_now: Type.Integer({ description: 'The rate now: the limit times the throttle factor' }),
  throttle: Type.Object({
    factor: Type.Number({ description: '1: full rate; below 1: slowed by a reply and recovering' }),
    paused_until: Nullable(Type.String({ format: 'date-time' })),
    out_until: Nullable(Type.String({ format: 'date-time', description: 'Taken out of its pools for this provider until then' })),
    reason: Nullable(Type.String({ description: 'The reply rule that last changed the lane' })),
    changed_at: Nullable(Type.String({ format: 'date-time' }))
  }),
  waiting: Type.Object({
    messages: Type.Integer({ description: 'Messages waiting for this lane (its rate, a pause, warm-up or connections)' }),
    oldest_seconds: Type.Union([Type.Integer(), Type.Null()])
  }),
  warmup: Type.Optional(Type.Object({
    day: Type.Integer(), per_day: Type.Integer(), sent_today: Type.Integer(), per_hour: Type.Integer(), sent_this_hour: Type.Integer()
  }, { description: 'Present while the source warms up: today\'s allowance per provider and what was sent against it' }))
})
