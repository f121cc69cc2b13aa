import { Type, type Static } from 'typebox'
import { WebhookFilters } from './webhook_filters.ts'

/** Control-plane records as stored in NATS KV. Timestamps are ISO 8601 UTC strings. */

export const PLANS = ['free', 'starter', 'pro', 'enterprise'] as const
export const PLAN_RATE_LIMITS: Record<Exclude<(typeof PLANS)[number], 'enterprise'>, number> = { free: 60, starter: 300, pro: 1000 }
export const PERMISSIONS = ['send', 'read', 'manage', 'admin'] as const
export type Permission = (typeof PERMISSIONS)[number]
export type PlanName = (typeof PLANS)[number]

export const OrgRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  plan: Type.Union([Type.Literal('free'), Type.Literal('starter'), Type.Literal('pro'), Type.Literal('enterprise')]),
  /** Only for `enterprise`; the operator sets it. */
  rate_limit_per_minute: Type.Optional(Type.Integer({ minimum: 1 })),
  /** The egress pool its mail leaves from (absent: `default`); only an operator sets it (protocol/egress/records.ts). */
  egress_pool: Type.Optional(Type.String()),
  /**
   * `suspended`: every key of the organisation is refused (403 `organization_suspended`, SMTP `525 5.7.13`) until an
   * operator resumes it; absent means active (records written before suspension existed have no status).
   */
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('suspended')])),
  /** When the operator suspended it; absent while active. */
  suspended_at: Type.Optional(Type.String()),
  /**
   * Whole days its messages, events and message content are kept, each at most the installation's maximum; absent (or
   * a field absent): the maximum. Set by the organisation or the operator (docs/privacy.md#retention).
   */
  retention: Type.Optional(Type.Object({
    messages_days: Type.Optional(Type.Integer({ minimum: 1 })),
    events_days: Type.Optional(Type.Integer({ minimum: 1 })),
    content_days: Type.Optional(Type.Integer({ minimum: 0 }))
  })),
  created_at: Type.String()
})
export type OrgRecord = Static<typeof OrgRecord>

/** Whether an organisation's keys are refused: only an operator suspends and resumes (stores/control_plane/organizations.ts). */
export function isSuspended (org: Pick<OrgRecord, 'status'>): boolean {
  return org.status === 'suspended'
}

export const DnsRecord = Type.Object({
  type: Type.String(),
  name: Type.String(),
  value: Type.String(),
  /** Found in DNS at the last check (absent: never checked). */
  verified: Type.Optional(Type.Boolean())
})

/** One DKIM key: its selector, the PKCS#8 PEM private key, and the `p=` value of its TXT record. */
export const DkimKeyRecord = Type.Object({ selector: Type.String(), private_key: Type.String(), public_key: Type.String() })
export type DkimKeyRecord = Static<typeof DkimKeyRecord>

/** A rotation's new keys: an RSA-2048 and an ed25519 key, each under its own selector. */
export const DkimKeyPair = Type.Object({ rsa: DkimKeyRecord, ed25519: DkimKeyRecord, created_at: Type.String() })
export type DkimKeyPair = Static<typeof DkimKeyPair>

/** A host under the domain that its owner chose, and when its DNS record was first found. */
export const DomainHost = Type.Object({ host: Type.String(), verified_at: Type.Optional(Type.String()) })
export type DomainHost = Static<typeof DomainHost>

export const DomainRecord = Type.Object({
  id: Type.String(),
  org_id: Type.String(),
  name: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('verified')]),
  dkim_selector: Type.String(),
  dkim_private_key: Type.String(),
  dkim_public_key: Type.String(),
  /** The ed25519 key (RFC 8463) that signs next to the RSA key of `dkim_selector`, from `dkim_ed25519_verified_at`. */
  dkim_ed25519: Type.Optional(DkimKeyRecord),
  /** When the ed25519 key's TXT record was first found; until then only the RSA key signs. */
  dkim_ed25519_verified_at: Type.Optional(Type.String()),
  /** A rotation waiting for its DNS records: these keys replace the signing ones once both records are found. */
  dkim_next: Type.Optional(DkimKeyPair),
  /** TXT records of keys a rotation replaced, still listed until `listed_until`. */
  dkim_retired: Type.Optional(Type.Array(Type.Object({ record: DnsRecord, listed_until: Type.String() }))),
  records: Type.Array(DnsRecord),
  created_at: Type.String(),
  verified_at: Type.Optional(Type.String()),
  /** Overrides its organisation's egress pool for mail from this domain; only an operator sets it. */
  egress_pool: Type.Optional(Type.String()),
  /** The domain's own return-path host (protocol/domain_hosts.ts); used once `verified_at` is set. */
  return_path: Type.Optional(DomainHost),
  /** The domain's own host for open, click and unsubscribe links; used once `verified_at` is set. */
  tracking: Type.Optional(DomainHost)
})
export type DomainRecord = Static<typeof DomainRecord>

export const ApiKeyRecord = Type.Object({
  id: Type.String(),
  org_id: Type.String(),
  domain_id: Type.String(),
  name: Type.String(),
  permissions: Type.Array(Type.Union([Type.Literal('send'), Type.Literal('read'), Type.Literal('manage'), Type.Literal('admin')])),
  environment: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  /** SHA-256 of the key value, hex; the value itself is never stored. */
  hash: Type.String(),
  prefix: Type.String(),
  last4: Type.String(),
  created_at: Type.String(),
  revoked_at: Type.Optional(Type.String()),
  /** Set on the old key of a rotation: it stops working at this time. */
  expires_at: Type.Optional(Type.String()),
  replaced_by: Type.Optional(Type.String()),
  /** The message stream of sends that name none (HTTP `stream`, SMTP `X-Outbox-Stream`); absent: `transactional`. */
  default_stream: Type.Optional(Type.String())
})
export type ApiKeyRecord = Static<typeof ApiKeyRecord>

/**
 * A key of the operator role (`ob_op_…`): it reaches only the operator API (`/v1/operator/…`), no organisation's
 * data, and organisation keys never reach the operator API. Made and revoked with the CLI.
 */
export const OperatorKeyRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  /** SHA-256 of the key value, hex; the value itself is never stored. */
  hash: Type.String(),
  prefix: Type.String(),
  created_at: Type.String(),
  revoked_at: Type.Optional(Type.String())
})
export type OperatorKeyRecord = Static<typeof OperatorKeyRecord>

export const WEBHOOK_EVENT_TYPES = [
  'delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained', 'inbound', 'inbound.received',
  'domain.health_changed', 'stream.paused', 'stream.resumed'
] as const

export const WebhookRecord = Type.Object({
  id: Type.String(),
  org_id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  secret: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('failed')]),
  created_at: Type.String(),
  updated_at: Type.String(),
  /** Set when the last retry failed; attempts of events fanned out before it are never made, even after revival. */
  failed_at: Type.Optional(Type.String()),
  /** The secret before the last rotation: requests are signed with it as well until `previous_secret_expires_at`. */
  previous_secret: Type.Optional(Type.String()),
  previous_secret_expires_at: Type.Optional(Type.String()),
  /** What the webhook receives beyond its event types (webhook_filters.ts); absent: every event of those types. */
  filters: Type.Optional(WebhookFilters)
})
export type WebhookRecord = Static<typeof WebhookRecord>

export const TemplateRecord = Type.Object({
  id: Type.String(),
  org_id: Type.String(),
  name: Type.String(),
  subject: Type.String(),
  html: Type.String(),
  text: Type.Optional(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String()
})
export type TemplateRecord = Static<typeof TemplateRecord>

export const RouteRecord = Type.Object({
  id: Type.String(),
  org_id: Type.String(),
  match: Type.String(),
  action: Type.Object({ type: Type.Literal('webhook'), include_attachments: Type.Boolean() }),
  created_at: Type.String()
})
export type RouteRecord = Static<typeof RouteRecord>

export const SUPPRESSION_REASONS = ['hard_bounce', 'complaint', 'unsubscribe', 'manual'] as const
export const SuppressionRecord = Type.Object({
  org_id: Type.String(),
  email: Type.String(),
  reason: Type.Union([Type.Literal('hard_bounce'), Type.Literal('complaint'), Type.Literal('unsubscribe'), Type.Literal('manual')]),
  message_id: Type.Optional(Type.String()),
  created_at: Type.String(),
  /** After this instant (ISO 8601, UTC) the entry no longer suppresses; manual entries only. */
  expires_at: Type.Optional(Type.String()),
  /**
   * The broadcast stream the entry applies to alone (an unsubscribe or complaint of its mail); absent: every stream
   * of the organisation (hard bounces, manual entries, unsubscribes and complaints of transactional mail).
   */
  stream: Type.Optional(Type.String())
})
export type SuppressionRecord = Static<typeof SuppressionRecord>
