import { Type, type Static } from 'typebox'

/**
 * Every setting Outbox reads, as the environment variables that carry them.
 * Defaults live here and nowhere else; `load.ts` converts, checks and freezes.
 */
const HostPattern = '^[A-Za-z0-9.:\\-\\[\\]]+$'
/** A DNS host name whose last label starts with a letter, so an IPv4 or IPv6 address never matches. */
export const MxHostPattern = '^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.?$'
const DnsLabel = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?'
/** A plain mailbox at a DNS name: ASCII local part without quotes, spaces or angle brackets. */
const ReportAddressPattern = `^[A-Za-z0-9.!#$%&'*+/=?^_\`{|}~-]{1,64}@(?=.{1,253}$)(${DnsLabel}\\.)+` +
  '[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$'
/** A DKIM selector: one or more DNS labels (RFC 6376 §3.1). */
const SelectorPattern = `^${DnsLabel}(\\.${DnsLabel})*$`
const SecondsList = '^\\s*\\d+(\\s*,\\s*\\d+)*\\s*$'

export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = '60,300,1800,7200,18000,36000,36000,36000,36000,36000'
// 60 s, 5 m, 15 m, 1 h, 4 h, then every 8 h: 13 attempts spread over 69 h, inside the 72 h promise.
export const DEFAULT_DELIVERY_RETRY_SCHEDULE = '60,300,900,3600,14400,28800,28800,28800,28800,28800,28800,28800,28800'

/** JetStream file store Outbox divides among its streams and buckets (MB of 1024² bytes, as nats-server counts). */
/**
 * The blocklists a domain health check asks about each egress source: Spamhaus ZEN (SBL, XBL, PBL together) and
 * SpamCop, the two the big receivers' rejections cite most. Spamhaus refuses queries sent through public resolvers.
 */
export const DEFAULT_DNSBL_ZONES = 'zen.spamhaus.org,bl.spamcop.net'
export const DEFAULT_NATS_STORE_MB = 10 * 1024
/** Below this the smallest shares (a control-plane bucket, the lease bucket) would not hold a working installation. */
export const MIN_NATS_STORE_MB = 16

/** 0.3 %: the complaint rate the 2024 Gmail and Yahoo bulk-sender rules tell senders never to reach. */
export const DEFAULT_MAX_COMPLAINT_PCT = 0.3
/** 5 %: a hard-bounce rate well past what a maintained list shows (under 2 %), reached by a bought or stale list. */
export const DEFAULT_MAX_BOUNCE_PCT = 5
/** 1000 sends: at 0.3 % the first three complaints, so one angry recipient of a small sender pauses nothing. */
export const DEFAULT_REPUTATION_MIN_VOLUME = 1000

/** Inbound SMTP sessions open at once, all senders together. */
export const DEFAULT_INBOUND_MAX_CONNECTIONS = 1000
/** Inbound SMTP sessions open at once from one client address (large senders open a handful in parallel). */
export const DEFAULT_INBOUND_MAX_CONNECTIONS_PER_ADDRESS = 20
/**
 * 5 min: the longest an inbound SMTP session may last, however it trickles bytes to reset the idle timeout.
 * A 25 MB message at 1 Mbit/s takes 3.5 min.
 */
export const DEFAULT_INBOUND_SESSION_DEADLINE_MS = 300_000
/** SMTP submission sessions open at once, all clients together. */
export const DEFAULT_SUBMISSION_MAX_CONNECTIONS = 500
/** SMTP submission sessions open at once from one client address (an application's mail pool opens a few). */
export const DEFAULT_SUBMISSION_MAX_CONNECTIONS_PER_ADDRESS = 20
/** 60 s: an SMTP submission session silent this long is closed (421). */
export const DEFAULT_SUBMISSION_IDLE_TIMEOUT_MS = 60_000
/** 10 min: the longest an SMTP submission session may last, whatever it sends (a pooled client reconnects). */
export const DEFAULT_SUBMISSION_SESSION_DEADLINE_MS = 600_000
/** Open event-stream sockets one API key may hold at once, per gateway process. */
export const DEFAULT_EVENT_STREAM_MAX_PER_KEY = 10
/** Open event-stream sockets (authenticated or not) from one client address at once, per gateway process. */
export const DEFAULT_EVENT_STREAM_MAX_PER_ADDRESS = 50
/**
 * Days a sent message's content view is kept at most: as long as the read model keeps the message itself
 * (30 days), since the content is read only through the message.
 */
export const MAX_MESSAGE_CONTENT_RETENTION_DAYS = 30
/** The longest the audit log may be kept: ten years. */
export const MAX_AUDIT_RETENTION_DAYS = 3650
/**
 * 64 KB: the most an `inbound.received` event's `data` takes as JSON. Past it the event carries excerpts and a
 * reference to the full message (GET /v1/inbound/{id}/raw), so mail from strangers costs the event stream, the read
 * model and every event list a bounded size per message however large the mail is.
 */
export const DEFAULT_INBOUND_EVENT_MAX_BYTES = 64 * 1024
/** 1 MB: the most one list response (`GET /v1/events`, `/v1/messages`, …) takes; a page stops early past it. */
export const DEFAULT_API_LIST_MAX_BYTES = 1024 * 1024
/** An event's envelope and the fields beside `data` are well under this; with `data` it is an event's largest size. */
export const LIST_ITEM_HEADROOM = 16 * 1024
/** The window of the inbound quotas: 1 hour. */
export const DEFAULT_INBOUND_QUOTA_WINDOW_S = 3600
/** Messages one route accepts per window (a support address of a busy shop gets a few hundred an hour). */
export const DEFAULT_INBOUND_ROUTE_MAX_MESSAGES = 10_000
/** Bytes one route accepts per window: 1 GB. */
export const DEFAULT_INBOUND_ROUTE_MAX_BYTES = 1024 * 1024 * 1024
/** Messages one sending client address (an IPv6 client by its /64) delivers per window, to all routes together. */
export const DEFAULT_INBOUND_SENDER_MAX_MESSAGES = 2000
/** Bytes one sending client address delivers per window: 500 MB. */
export const DEFAULT_INBOUND_SENDER_MAX_BYTES = 500 * 1024 * 1024

export const EnvSchema = Type.Object({
  OB_HTTP_HOST: Type.String({ pattern: HostPattern, default: '127.0.0.1' }),
  OB_HTTP_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  OB_METRICS_HOST: Type.String({ pattern: HostPattern, default: '127.0.0.1' }),
  OB_METRICS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 9464 }),
  // Printable ASCII without spaces, as an Authorization header carries it.
  OB_METRICS_TOKEN: Type.Optional(Type.String({ pattern: '^[\\x21-\\x7e]{32,256}$' })),
  // Unset: http://127.0.0.1:<OB_HTTP_PORT> (load.ts), so the links point at the port Outbox listens on.
  OB_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  // A host name (an MX record cannot name an address); unset: the host of OB_PUBLIC_URL when that is a name.
  OB_MX_HOST: Type.Optional(Type.String({ pattern: MxHostPattern })),
  // Each entry is checked as an address range by load.ts; the pattern only keeps the list's shape.
  OB_TRUSTED_PROXIES: Type.Optional(Type.String({ pattern: '^[^\\s,]+(\\s*,\\s*[^\\s,]+)*$' })),
  OB_EVENT_STREAM_MAX_PER_KEY: Type.Integer({ minimum: 1, maximum: 100_000, default: DEFAULT_EVENT_STREAM_MAX_PER_KEY }),
  OB_EVENT_STREAM_MAX_PER_ADDRESS: Type.Integer({ minimum: 1, maximum: 100_000, default: DEFAULT_EVENT_STREAM_MAX_PER_ADDRESS }),
  NATS_URL: Type.Optional(Type.String({ pattern: '^(nats|tls)://[^\\s]+$' })),
  /** Checked by parseRedisUrl, which explains what it refuses (Cluster, an unknown scheme). */
  REDIS_URL: Type.Optional(Type.String()),
  OB_SMTP_INBOUND_HOST: Type.String({ pattern: HostPattern, default: '127.0.0.1' }),
  OB_SMTP_INBOUND_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 2525 }),
  OB_SMTP_INBOUND_TLS_CERT: Type.Optional(Type.String({ minLength: 1 })),
  OB_SMTP_INBOUND_TLS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  OB_SMTP_INBOUND_MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 100_000, default: DEFAULT_INBOUND_MAX_CONNECTIONS }),
  OB_SMTP_INBOUND_MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({
    minimum: 1, maximum: 100_000, default: DEFAULT_INBOUND_MAX_CONNECTIONS_PER_ADDRESS
  }),
  OB_SMTP_INBOUND_SESSION_DEADLINE_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: DEFAULT_INBOUND_SESSION_DEADLINE_MS }),
  OB_INBOUND_EVENT_MAX_BYTES: Type.Integer({ minimum: 8192, maximum: 1024 * 1024, default: DEFAULT_INBOUND_EVENT_MAX_BYTES }),
  OB_INBOUND_QUOTA_WINDOW_S: Type.Integer({ minimum: 1, maximum: 86_400, default: DEFAULT_INBOUND_QUOTA_WINDOW_S }),
  OB_INBOUND_ROUTE_MAX_MESSAGES: Type.Integer({ minimum: 0, maximum: 100_000_000, default: DEFAULT_INBOUND_ROUTE_MAX_MESSAGES }),
  OB_INBOUND_ROUTE_MAX_BYTES: Type.Integer({ minimum: 0, maximum: 1024 ** 4, default: DEFAULT_INBOUND_ROUTE_MAX_BYTES }),
  OB_INBOUND_SENDER_MAX_MESSAGES: Type.Integer({ minimum: 0, maximum: 100_000_000, default: DEFAULT_INBOUND_SENDER_MAX_MESSAGES }),
  OB_INBOUND_SENDER_MAX_BYTES: Type.Integer({ minimum: 0, maximum: 1024 ** 4, default: DEFAULT_INBOUND_SENDER_MAX_BYTES }),
  OB_API_LIST_MAX_BYTES: Type.Integer({ minimum: 65_536, maximum: 64 * 1024 * 1024, default: DEFAULT_API_LIST_MAX_BYTES }),
  OB_SMTP_SUBMISSION_HOST: Type.String({ pattern: HostPattern, default: '127.0.0.1' }),
  OB_SMTP_SUBMISSION_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 2587 }),
  OB_SMTP_TLS_CERT_FILE: Type.Optional(Type.String({ minLength: 1 })),
  OB_SMTP_TLS_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  OB_SMTP_SUBMISSION_INSECURE_AUTH: Type.Boolean({ default: false }),
  OB_SMTP_SUBMISSION_MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 100_000, default: DEFAULT_SUBMISSION_MAX_CONNECTIONS }),
  OB_SMTP_SUBMISSION_MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({
    minimum: 1, maximum: 100_000, default: DEFAULT_SUBMISSION_MAX_CONNECTIONS_PER_ADDRESS
  }),
  OB_SMTP_SUBMISSION_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: DEFAULT_SUBMISSION_IDLE_TIMEOUT_MS }),
  OB_SMTP_SUBMISSION_SESSION_DEADLINE_MS: Type.Integer({
    minimum: 1000, maximum: 3_600_000, default: DEFAULT_SUBMISSION_SESSION_DEADLINE_MS
  }),
  OB_SMTP_RELAY: Type.Optional(Type.String({ pattern: '^smtps?://[^\\s]+$' })),
  OB_SMTP_RELAY_TLS: Type.Union([Type.Literal('verify'), Type.Literal('insecure')], { default: 'verify' }),
  OB_SMTP_CA_FILE: Type.Optional(Type.String({ minLength: 1 })),
  OB_MTA_STS_PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 443 }),
  OB_TLSRPT_CHECK_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 3_600_000 }),
  // The sender of TLS reports mailed to `mailto:` rua (RFC 8460 §5.3); the three are set together (load.ts).
  OB_REPORT_FROM: Type.Optional(Type.String({ pattern: ReportAddressPattern })),
  OB_REPORT_DKIM_SELECTOR: Type.Optional(Type.String({ pattern: SelectorPattern })),
  OB_REPORT_DKIM_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  OB_SMTP_OUTBOUND_PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 25 }),
  OB_SMTP_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  OB_SMTP_POOL_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  OB_DELIVERY_HOST_RATE: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  OB_EGRESS_SHAPING: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  OB_EGRESS_RECOVER_EVERY_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 600_000 }),
  OB_EGRESS_CONNECTION_HOLD_MS: Type.Integer({ minimum: 3000, maximum: 600_000, default: 60_000 }),
  OB_ENGINE_ACK_WAIT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 60_000 }),
  OB_ENGINE_SHARD_CAPACITY: Type.Integer({ minimum: 1, maximum: 10_000, default: 64 }),
  OB_ENGINE_SWEEP_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 60_000 }),
  OB_REDIS_POLICY_CHECK_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 60_000 }),
  OB_STUCK_AFTER_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 300_000 }),
  OB_MESSAGE_CONTENT_RETENTION_DAYS: Type.Integer({
    minimum: 0, maximum: MAX_MESSAGE_CONTENT_RETENTION_DAYS, default: MAX_MESSAGE_CONTENT_RETENTION_DAYS
  }),
  OB_AUDIT_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: MAX_AUDIT_RETENTION_DAYS, default: 365 }),
  OB_BOOTSTRAP_ADMIN_KEY: Type.Optional(Type.String({ pattern: '^ob_live_[A-Za-z0-9]{16,64}$' })),
  OB_BOOTSTRAP_DOMAIN: Type.String({
    pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$', default: 'example.com'
  }),
  OB_BOOTSTRAP_PLAN: Type.Union([Type.Literal('free'), Type.Literal('starter'), Type.Literal('pro'), Type.Literal('enterprise')], {
    default: 'free'
  }),
  OB_ENTERPRISE_RATE_LIMIT: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 5000 }),
  OB_WEBHOOK_CA_FILE: Type.Optional(Type.String({ minLength: 1 })),
  OB_WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  OB_WEBHOOK_RETRY_SCHEDULE: Type.String({ pattern: SecondsList, default: DEFAULT_WEBHOOK_RETRY_SCHEDULE }),
  OB_WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 30_000 }),
  OB_WEBHOOK_ENDPOINT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 16 }),
  OB_DELIVERY_RETRY_SCHEDULE: Type.String({ pattern: SecondsList, default: DEFAULT_DELIVERY_RETRY_SCHEDULE }),
  // `sources` or `include:<host name>`; load.ts checks the name (MxHostPattern) and explains what it refuses.
  OB_SPF: Type.String({ pattern: '^[^\\s]+$', default: 'sources' }),
  OB_DOMAIN_VERIFICATION: Type.Union([Type.Literal('dns'), Type.Literal('off')], { default: 'dns' }),
  OB_DNS_SERVERS: Type.Optional(Type.String({ pattern: '^[^\\s,]+(,[^\\s,]+)*$' })),
  /** DNS blocklists asked about each egress source by the domain health check; `none`: no blocklist. */
  OB_DNSBL_ZONES: Type.String({
    pattern: '^[a-z0-9][a-z0-9.-]*[a-z0-9](,[a-z0-9][a-z0-9.-]*[a-z0-9])*$', default: DEFAULT_DNSBL_ZONES
  }),
  // Reputation guards (docs/reputation.md): percentages, so 0.3 reads as the 0.3 % of the Gmail and Yahoo rule.
  OB_REPUTATION_GUARD: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  OB_REPUTATION_MAX_COMPLAINT_PCT: Type.Number({ exclusiveMinimum: 0, maximum: 100, default: DEFAULT_MAX_COMPLAINT_PCT }),
  OB_REPUTATION_MAX_BOUNCE_PCT: Type.Number({ exclusiveMinimum: 0, maximum: 100, default: DEFAULT_MAX_BOUNCE_PCT }),
  OB_REPUTATION_MIN_VOLUME: Type.Integer({ minimum: 1, maximum: 100_000_000, default: DEFAULT_REPUTATION_MIN_VOLUME }),
  OB_REPUTATION_WINDOW_HOURS: Type.Integer({ minimum: 1, maximum: 168, default: 24 }),
  OB_DOMAIN_HEALTH_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 7 * 86_400_000, default: 3_600_000 }),
  OB_ROLE: Type.Union([Type.Literal('gateway'), Type.Literal('engine'), Type.Literal('inbound'), Type.Literal('all')], { default: 'all' }),
  OB_SHARD_LEASE_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 10_000 }),
  OB_ENGINE_SHARDS: Type.Integer({ minimum: 1, maximum: 256, default: 4 }),
  OB_ENGINE_THREADS: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  OB_PUBLISH_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 5000 }),
  OB_NATS_REPLICAS: Type.Union([Type.Literal(1), Type.Literal(3), Type.Literal(5)], { default: 1 }),
  OB_NATS_STORE_MB: Type.Integer({ minimum: MIN_NATS_STORE_MB, maximum: 16 * 1024 * 1024, default: DEFAULT_NATS_STORE_MB }),
  OB_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  OB_TRACKING_TOKEN_TTL_S: Type.Integer({ minimum: 1, maximum: 10 * 365 * 86_400, default: 31_536_000 }),
  OB_TRACKING_RATE_LIMIT: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 600 }),
  OB_DATA_DIR: Type.String({ minLength: 1, default: './var' }),
  OB_LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), { default: 'info' }),
  OB_SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 15_000 })
}, { additionalProperties: false })

export type Env = Static<typeof EnvSchema>
