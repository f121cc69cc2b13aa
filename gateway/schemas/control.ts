import { Type } from 'typebox'
import { ERRORS, WebhookFilters, type ErrorCode } from '../../protocol/mod.ts'
import type { ResponseDoc } from '../http/route.ts'

/** Response records of the control-plane endpoints (what users see, never what is stored). */

export const ErrorBody = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    field: Type.Optional(Type.String()),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    retry_after: Type.Optional(Type.Integer()),
    request_id: Type.String()
  })
})

/**
 * Error responses of a route: every authenticated route can answer 401 and 429, the rest are listed per
 * route with the reason they happen.
 */
export function errorResponses (reasons: Partial<Record<ErrorCode, string>>): Record<number, ResponseDoc> {
  const all: Partial<Record<ErrorCode, string>> = {
    unauthorized: 'Missing, malformed, unknown, revoked or expired API key',
    rate_limited: 'Per-key rate limit of the plan exceeded',
    ...reasons
  }
  const out: Record<number, ResponseDoc> = {}
  for (const [code, why] of Object.entries(all) as Array<[ErrorCode, string]>) {
    const status = ERRORS[code].status
    const description = out[status] === undefined ? `${code}: ${why}` : `${out[status]!.description}; ${code}: ${why}`
    out[status] = { description, schema: ErrorBody }
  }
  return out
}

/** Error responses of an operator route (`/v1/operator/…`): 401 and 403 are about the operator key, not an organisation's. */
export function operatorErrorResponses (reasons: Partial<Record<ErrorCode, string>>): Record<number, ResponseDoc> {
  return errorResponses({
    unauthorized: 'Missing, malformed, unknown or revoked operator key',
    forbidden: 'An organisation key, admin included',
    rate_limited: 'Per-key limit of 600 requests a minute exceeded',
    ...reasons
  })
}

export const FORBIDDEN_PERMISSION = 'The key lacks the permission this endpoint needs'
export const FORBIDDEN_OTHER_ORG = 'The key lacks the permission, or the resource belongs to another organisation'

export const Permission = Type.Enum(['send', 'read', 'manage', 'admin'])
export const Environment = Type.Enum(['live', 'test'])
export const Timestamp = Type.String({ format: 'date-time' })

export const ApiKeyView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  domain_id: Type.String(),
  permissions: Type.Array(Permission),
  environment: Environment,
  prefix: Type.String({ description: 'The first 12 characters of the key value' }),
  last4: Type.String({ description: 'The last 4 characters of the key value' }),
  created_at: Timestamp,
  revoked_at: Type.Optional(Timestamp),
  expires_at: Type.Optional(Timestamp),
  replaced_by: Type.Optional(Type.String()),
  default_stream: Type.Optional(Type.String({ description: 'The message stream of its sends that name none' }))
})

export const CreatedApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  domain_id: Type.String(),
  permissions: Type.Array(Permission),
  environment: Environment,
  key: Type.String({ description: 'The full key value; shown only in this response' }),
  prefix: Type.String(),
  created_at: Timestamp,
  default_stream: Type.Optional(Type.String({ description: 'The message stream of its sends that name none' }))
})

export const RotatedApiKey = Type.Object({
  id: Type.String({ description: 'Id of the new key' }),
  key: Type.String({ description: 'The new key value; shown only in this response' }),
  replaces: Type.String({ description: 'Id of the old key' }),
  old_key_expires_at: Timestamp
})

const RecordVerified = Type.Boolean({ description: 'Found in DNS at the last check (POST /v1/domains/{id}/verify); false until checked' })
const RecordWarning = Type.Optional(Type.String({
  description: 'Why the record cannot be published as listed (an MX or CNAME without a host name to name: its value is then empty), ' +
    'why an SPF record cannot be right (mail leaves through a relay OB_SPF does not name), or that a verified domain\'s SPF ' +
    'record changed since it was found'
}))
const ListedUntil = Type.Optional(Type.String({
  format: 'date-time',
  description: 'Only on the DKIM record of a key a rotation replaced: listed until then (7 days), after which it may be removed from DNS'
}))
export const DnsRecordView = Type.Object({
  type: Type.String(),
  name: Type.String(),
  value: Type.String(),
  verified: RecordVerified,
  warning: RecordWarning,
  listed_until: ListedUntil
})
export const CheckedDnsRecord = Type.Object({
  type: Type.String(),
  name: Type.String(),
  value: Type.String(),
  verified: RecordVerified,
  warning: RecordWarning,
  status: Type.Enum(['verified', 'missing']),
  listed_until: ListedUntil
})
const DkimSelector = Type.Object({ selector: Type.String(), algorithm: Type.Enum(['rsa-sha256', 'ed25519-sha256']) })
const DkimState = Type.Object({
  signing: Type.Array(DkimSelector, {
    description: 'The keys outbound mail is signed with now: the RSA key always, the ed25519 key once its TXT record was found'
  }),
  pending: Type.Array(DkimSelector, {
    description: 'Keys waiting for their TXT records: they sign from the verification that finds them ' +
      '(a rotation\'s pair once both are found)'
  })
})
const DomainStatus = Type.Enum(['pending', 'verified', 'lapsed'], {
  description: 'lapsed: another organisation verified this name first; this claim cannot verify'
})

const ChosenHostFields = {
  host: Type.String(),
  verified: Type.Boolean({ description: 'Its DNS records were found: mail uses it from now on' })
}
const ReturnPathHost = Type.Optional(Type.Object(ChosenHostFields, {
  description: 'The domain\'s own return-path host (PATCH /v1/domains/{id}); absent: bounces.<domain>'
}))
const TrackingHost = Type.Optional(Type.Object(ChosenHostFields, {
  description: 'The domain\'s own tracking host (PATCH /v1/domains/{id}); absent: the host of OB_PUBLIC_URL'
}))

export const DomainView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: DomainStatus,
  records: Type.Array(DnsRecordView),
  dkim: DkimState,
  created_at: Timestamp,
  verified_at: Type.Optional(Timestamp),
  return_path_host: ReturnPathHost,
  tracking_host: TrackingHost
})

export const VerifiedDomainView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: DomainStatus,
  records: Type.Array(CheckedDnsRecord),
  dkim: DkimState,
  created_at: Timestamp,
  verified_at: Type.Optional(Timestamp),
  return_path_host: ReturnPathHost,
  tracking_host: TrackingHost
})

const WebhookStatus = Type.Enum(['active', 'paused', 'failed'])

export const WebhookView = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  filters: WebhookFilters,
  status: WebhookStatus,
  created_at: Timestamp,
  updated_at: Timestamp
})

export const CreatedWebhook = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  filters: WebhookFilters,
  secret: Type.String({ description: 'whsec_…; shown only in this response' }),
  status: WebhookStatus,
  created_at: Timestamp,
  updated_at: Timestamp
})

export const TemplateView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  subject: Type.String(),
  html: Type.String(),
  text: Type.Optional(Type.String()),
  variables: Type.Array(Type.String(), { description: 'Placeholder names the template uses' }),
  created_at: Timestamp,
  updated_at: Timestamp
})

export const RouteAction = Type.Object({
  type: Type.Literal('webhook'), include_attachments: Type.Boolean()
}, { additionalProperties: false })

export const RouteView = Type.Object({
  id: Type.String(),
  match: Type.String(),
  action: RouteAction,
  created_at: Timestamp
})

export const SuppressionView = Type.Object({
  email: Type.String(),
  reason: Type.Enum(['hard_bounce', 'complaint', 'unsubscribe', 'manual']),
  message_id: Type.Optional(Type.String()),
  created_at: Timestamp,
  expires_at: Type.Optional(Type.String({
    format: 'date-time', description: 'After this instant the entry no longer suppresses (manual entries only)'
  })),
  stream: Type.Optional(Type.String({
    description: 'The broadcast stream the entry suppresses alone (an unsubscribe or complaint of its mail); absent: every stream'
  }))
})

export const BillingView = Type.Object({
  plan: Type.Enum(['free', 'starter', 'pro', 'enterprise']),
  rate_limit_per_minute: Type.Integer()
})
