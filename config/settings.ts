import type { CidrRange } from './cidr.ts'
import type { RedisTarget } from './redis_target.ts'
import type { ReputationThresholds } from '../protocol/mod.ts'

/**
 * `sources`: the addresses of the egress sources (docs/egress.md), and the host of the public URL while the pool
 * `default` has none. `include`: one SPF record the operator publishes (for all sources, or the relay's own).
 */
export type SpfSetting = { readonly kind: 'sources' } | { readonly kind: 'include', readonly domain: string }

export type Role = 'gateway' | 'engine' | 'inbound' | 'all'
export type Plan = 'free' | 'starter' | 'pro' | 'enterprise'

/** The frozen configuration every part receives; built once by `loadConfig`. */
export interface Config {
  readonly role: Role
  readonly http: {
    readonly host: string
    readonly port: number
    readonly publicUrl: string
    /**
     * The host the return-path MX record names: `OB_MX_HOST`, else the host of `publicUrl` when that is a name;
     * undefined when neither gives a name (the domain records then carry a warning instead of an MX value).
     */
    readonly mxHost?: string
    /** Peers whose `X-Forwarded-For` names the client address (load balancers, reverse proxies); empty by default. */
    readonly trustedProxies: readonly CidrRange[]
  }
  /**
   * Where a process without the HTTP API (role engine or inbound) serves `GET /metrics`; a process that runs the
   * gateway serves it on the HTTP port instead. Port 0 takes a free port (tests).
   */
  readonly metrics: {
    readonly host: string
    readonly port: number
    /** When set, every `GET /metrics` (HTTP port and metrics port) needs `Authorization: Bearer <token>`; else 401. */
    readonly token?: string
  }
  /** The most bytes one list response's body takes (`maxBytes`); a page stops before the item that would pass it. */
  readonly api: { readonly listMaxBytes: number }
  /** Caps on open sockets of `GET /v1/events/stream`, per gateway process. */
  readonly eventStream: { readonly maxPerKey: number, readonly maxPerAddress: number }
  /**
   * How long past its due time (`next_attempt_at`) a waiting message may go without an attempt before the read API
   * calls it `stuck`.
   */
  readonly stuckAfterMs: number
  /**
   * The content view of sent messages (GET /v1/messages/{id}/content): whole days the stream OB_MESSAGE_CONTENT
   * keeps it, 0 to MAX_MESSAGE_CONTENT_RETENTION_DAYS; 0 records none.
   */
  readonly messageContent: { readonly retentionDays: number }
  /** The audit log (GET /v1/audit-log): whole days the stream OB_AUDIT keeps an entry, 1 to MAX_AUDIT_RETENTION_DAYS. */
  readonly audit: { readonly retentionDays: number }
  /**
   * `publishTimeoutMs`: how long the gateway waits for JetStream's PubAck before answering 503. `storeBytes`: the
   * JetStream file store Outbox divides among its streams and buckets (protocol/store_budget.ts).
   */
  readonly nats: {
    readonly servers: readonly string[]
    readonly replicas: 1 | 3 | 5
    readonly configured: boolean
    readonly publishTimeoutMs: number
    readonly storeBytes: number
  }
  /** `url` as given (for messages, passwords masked with describeRedisTarget); `target` is what clients connect to. */
  readonly redis: { readonly url: string, readonly target: RedisTarget, readonly configured: boolean, readonly policyCheckMs: number }
  readonly smtp: {
    readonly inboundHost: string
    readonly inboundPort: number
    readonly inboundTlsCert?: string
    readonly inboundTlsKey?: string
    /** Inbound sessions open at once; past it a new connection gets 421. */
    readonly inboundMaxConnections: number
    /** Inbound sessions open at once from one client address; past it a new connection gets 421. */
    readonly inboundMaxConnectionsPerAddress: number
    /** An inbound session is closed with 421 this long after it connected. */
    readonly inboundSessionDeadlineMs: number
    readonly relay?: string
    /**
     * `verify`: a relay given credentials (or `smtps://`) is spoken to only over TLS with a certificate that verifies
     * for its host, before AUTH; `insecure`: no certificate check and AUTH without TLS (warned at start).
     */
    readonly relayTls: 'verify' | 'insecure'
    /** PEM file of extra CAs that verified outbound TLS trusts besides Node's roots (relay, MTA-STS, TLS reports). */
    readonly caFile?: string | undefined
    /** Port of the MTA-STS policy servers (`https://mta-sts.<domain>`): 443; tests point it at their own server. */
    readonly mtaStsPort: number
    /** How often an engine looks for TLS reports of finished days to send (the sending runs on one engine at a time). */
    readonly tlsReportCheckMs: number
    /**
     * The installation's sender of TLS reports mailed to `mailto:` rua (RFC 8460 §5.3), DKIM-signed for the domain of
     * `from`; unset: such reports are not sent (counted, warned at start).
     */
    readonly reportSender?: {
      readonly from: string
      /** The domain of `from`, lower case: the signing domain (`d=`). */
      readonly domain: string
      readonly dkimSelector: string
      /** PEM private key (RSA or Ed25519), read once by the engine at start. */
      readonly dkimKeyFile: string
    }
    /** Port of recipients' MX hosts (25 in production; tests point it at a sink). */
    readonly outboundPort: number
    /**
     * Whether mail may go to MX hosts (or implicit-MX hosts) on loopback, private, link-local or other non-public
     * addresses; false refuses them with a `domain` bounce. The relay (`relay`) is the operator's own and is not checked.
     */
    readonly allowPrivate: boolean
    /** Pooled SMTP connections per destination host, per engine thread. */
    readonly poolConnections: number
    /**
     * Whether mail to MX hosts goes through the egress layer (sources, provider limits held cluster-wide, warm-up,
     * throttling learned from replies; docs/egress.md). Mail through `relay` never does: the relay shapes its own.
     */
    readonly egressShaping: boolean
    /** How long a lane slowed by a reply takes to double its rate back (stores/egress RECOVER_EVERY_MS by default). */
    readonly egressRecoverEveryMs: number
    /**
     * How long an egress connection's cluster-wide slot lasts without renewal (renewed every third of it while open):
     * the slots of a killed engine's connections are free again by then. @default 60_000
     */
    readonly egressConnectionHoldMs: number
  }
  readonly inbound: {
    /** The most an `inbound.received` event's `data` takes as JSON; past it excerpts and a reference to the message. */
    readonly eventMaxBytes: number
    /**
     * Per window (fixed, `windowS` long, all inbound processes together through Redis): what one route and one
     * sending client address may receive. 0 turns a limit off.
     */
    readonly quota: {
      readonly windowS: number
      readonly routeMessages: number
      readonly routeBytes: number
      readonly senderMessages: number
      readonly senderBytes: number
    }
  }
  /** SMTP submission (gateway role): applications send with an API key as the password. */
  readonly submission: {
    /** false when `OB_SMTP_SUBMISSION_PORT` is 0. */
    readonly enabled: boolean
    readonly host: string
    readonly port: number
    /** PEM files for STARTTLS; both or neither. Neither: a self-signed certificate is made at start. */
    readonly tlsCertFile?: string
    readonly tlsKeyFile?: string
    /** AUTH offered before STARTTLS (local development only). */
    readonly insecureAuth: boolean
    readonly maxConnections: number
    readonly maxConnectionsPerAddress: number
    readonly idleTimeoutMs: number
    readonly sessionDeadlineMs: number
  }
  readonly bootstrap: { readonly adminKey?: string, readonly domain: string, readonly plan: Plan }
  readonly plans: { readonly enterpriseRateLimit: number }
  readonly webhook: {
    readonly caFile?: string
    readonly allowPrivate: boolean
    readonly retryScheduleS: readonly number[]
    /** Per attempt: time allowed for the response headers, and between body chunks. */
    readonly timeoutMs: number
    /** Requests in flight to one endpoint origin at once, per process. */
    readonly endpointConcurrency: number
  }
  readonly delivery: {
    readonly retryScheduleS: readonly number[]
    /** Messages per second to one destination MX host (all engines together); 0 = no limit. */
    readonly hostRatePerS: number
  }
  readonly domainVerification: 'dns' | 'off'
  /** How this installation's mail leaves, as the SPF records domains are told to publish name it (`OB_SPF`). */
  readonly spf: SpfSetting
  readonly dnsServers: readonly string[]
  readonly domainHealth: {
    /** DNS blocklist zones asked about each egress source (OB_DNSBL_ZONES). */
    readonly dnsblZones: readonly string[]
    /** How often the cluster checks every verified domain again (one process per period). */
    readonly intervalMs: number
  }
  /** Reputation guards (docs/reputation.md): pause a stream whose complaint or hard-bounce rate passes its threshold. */
  readonly reputation: {
    /** OB_REPUTATION_GUARD: `off` counts and shows the rates but never pauses. */
    readonly enabled: boolean
    readonly thresholds: ReputationThresholds
  }
  readonly engine: {
    readonly shards: number
    readonly threads: number
    /** JetStream ack_wait of the outbound consumers; long SMTP sessions extend it with `working()`. */
    readonly ackWaitMs: number
    /** Messages one shard has in flight at most (its pull size). */
    readonly shardCapacity: number
    /** How long a shard lease lasts without renewal; renewed every third of it. */
    readonly leaseMs: number
    /** Period of the light work-queue sweep (engine/work_queue_sweep.ts). */
    readonly sweepMs: number
  }
  /** Key material for tracking tokens; when unset a per-installation secret is kept in the control plane. */
  readonly secret?: string
  readonly tracking: {
    /** How long open and click tokens are honoured, counted from the message's creation. */
    readonly tokenTtlMs: number
    /** Requests per minute per client address to the `/t/` endpoints (burst the same); 0 = no limit. */
    readonly ratePerMinute: number
  }
  readonly dataDir: string
  readonly logLevel: string
  readonly shutdownTimeoutMs: number
}
