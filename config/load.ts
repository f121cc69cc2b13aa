import { Value } from 'typebox/value'
import { EnvSchema, LIST_ITEM_HEADROOM, MxHostPattern, type Env } from './schema.ts'
import type { Config, SpfSetting } from './settings.ts'
import { parseCidrList, type CidrRange } from './cidr.ts'
import { parseRedisUrl, RedisUrlError, type RedisTarget } from './redis_target.ts'
import type { InternalErrorCode } from '../protocol/mod.ts'

/** A setting that failed validation; `message` is one line naming every bad variable. */
export class ConfigError extends Error {
  readonly code = 'config_error' satisfies InternalErrorCode
  readonly variables: readonly string[]
  constructor (problems: ReadonlyArray<{ variable: string, message: string }>) {
    super('invalid configuration: ' + problems.map((p) => `${p.variable} ${p.message}`).join('; '))
    this.name = 'ConfigError'
    this.variables = problems.map((p) => p.variable)
  }
}

const KNOWN = Object.keys(EnvSchema.properties) as Array<keyof Env>
const INTEGERS = KNOWN.filter((name) => (EnvSchema.properties[name] as { type?: unknown }).type === 'integer')
const WHOLE_NUMBER = /^-?\d+$/

function seconds (list: string): number[] {
  return list.split(',').map((s) => Number(s.trim()))
}

function deepFreeze<T> (value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}

const MX_HOST = new RegExp(MxHostPattern)

/** `OB_MX_HOST`, else the public URL's host when it is a name (not an address), lower case without a final dot. */
function mxHostOf (configured: string | undefined, publicUrl: string): string | undefined {
  let host = configured
  if (host === undefined) {
    try { host = new URL(publicUrl).hostname } catch { return undefined }
    if (!MX_HOST.test(host)) return undefined
  }
  return host.toLowerCase().replace(/\.$/, '')
}

/**
 * `OB_SPF`: `sources` (the egress sources' addresses), or `include:<host name>` (an SPF record published for all the
 * installation's sources, or the relay's). Anything else is refused, as a wrong SPF record fails every sender's mail.
 */
function spfOf (value: string): SpfSetting {
  if (value === 'sources') return { kind: 'sources' }
  const m = /^include:(.+)$/i.exec(value)
  if (m !== null && MX_HOST.test(m[1]!) && m[1]!.includes('.')) return { kind: 'include', domain: m[1]!.toLowerCase().replace(/\.$/, '') }
  throw new ConfigError([{
    variable: 'OB_SPF',
    message: 'must be sources, or include: followed by a host name (include:spf.outbox.example.com, include:amazonses.com)'
  }])
}

const REPORT_SENDER = ['OB_REPORT_FROM', 'OB_REPORT_DKIM_SELECTOR', 'OB_REPORT_DKIM_KEY_FILE'] as const

/** The TLS reports' mail sender: all three settings, or none (a report mailed unsigned would be worthless, RFC 8460 §5.3). */
function reportSenderOf (e: Env): NonNullable<Config['smtp']['reportSender']> | undefined {
  const missing = REPORT_SENDER.filter((name) => e[name] === undefined)
  if (missing.length === REPORT_SENDER.length) return undefined
  if (missing.length > 0) {
    throw new ConfigError(missing.map((variable) => ({
      variable,
      message: 'must be set together with OB_REPORT_FROM, OB_REPORT_DKIM_SELECTOR and OB_REPORT_DKIM_KEY_FILE, or none of them'
    })))
  }
  const from = e.OB_REPORT_FROM!
  const at = from.lastIndexOf('@')
  const domain = from.slice(at + 1).toLowerCase()
  return {
    from: from.slice(0, at + 1) + domain,
    domain,
    dkimSelector: e.OB_REPORT_DKIM_SELECTOR!.toLowerCase(),
    dkimKeyFile: e.OB_REPORT_DKIM_KEY_FILE!
  }
}

/**
 * Reads the settings once. Only the variables the schema knows are taken from `env`;
 * empty strings count as unset so that `OB_X= npm start` falls back to the default.
 */
export function loadConfig (env: Readonly<Record<string, string | undefined>> = process.env): Config {
  const picked: Record<string, unknown> = {}
  for (const name of KNOWN) {
    const raw = env[name]
    if (raw !== undefined && raw !== '') picked[name] = raw.trim()
  }
  const withDefaults = Value.Default(EnvSchema, picked)
  const converted = Value.Convert(EnvSchema, withDefaults) as Record<string, unknown>
  // Convert truncates "1.5" to 1 for an integer setting; a fraction is refused instead, as any other non-number.
  // (Default and Convert change `picked` in place, so the value is read from `env` again.)
  for (const name of INTEGERS) {
    const raw = env[name]?.trim()
    if (raw !== undefined && raw !== '' && !WHOLE_NUMBER.test(raw)) converted[name] = raw
  }
  if (!Value.Check(EnvSchema, converted)) {
    const problems = new Map<string, string>()
    for (const err of Value.Errors(EnvSchema, converted)) {
      const variable = err.instancePath.replace(/^\//, '') || '(root)'
      if (problems.has(variable)) continue
      const choices = (EnvSchema.properties as Record<string, { anyOf?: Array<{ const?: unknown }> }>)[variable]?.anyOf
      const expected = choices !== undefined ? `must be one of ${choices.map((c) => String(c.const)).join(', ')}` : err.message
      problems.set(variable, `${expected} (got ${JSON.stringify(picked[variable] ?? null)})`)
    }
    throw new ConfigError([...problems].map(([variable, message]) => ({ variable, message })))
  }
  const e = converted as Env
  let trustedProxies: CidrRange[] = []
  if (e.OB_TRUSTED_PROXIES !== undefined) {
    const parsed = parseCidrList(e.OB_TRUSTED_PROXIES)
    if ('bad' in parsed) {
      const message = `must be a comma-separated list of addresses or CIDR ranges (${JSON.stringify(parsed.bad)} is neither)`
      throw new ConfigError([{ variable: 'OB_TRUSTED_PROXIES', message }])
    }
    trustedProxies = parsed.ranges
  }
  if ((e.OB_SMTP_TLS_CERT_FILE === undefined) !== (e.OB_SMTP_TLS_KEY_FILE === undefined)) {
    const missing = e.OB_SMTP_TLS_CERT_FILE === undefined ? 'OB_SMTP_TLS_CERT_FILE' : 'OB_SMTP_TLS_KEY_FILE'
    throw new ConfigError([{
      variable: missing,
      message: 'must be set together with its pair (OB_SMTP_TLS_CERT_FILE and OB_SMTP_TLS_KEY_FILE), ' +
        'or neither for a self-signed certificate'
    }])
  }
  if (e.OB_API_LIST_MAX_BYTES < e.OB_INBOUND_EVENT_MAX_BYTES + LIST_ITEM_HEADROOM) {
    // Every item must fit in a page on its own, or a page could hold none and a list could not move on.
    throw new ConfigError([{
      variable: 'OB_API_LIST_MAX_BYTES', message: `must be at least OB_INBOUND_EVENT_MAX_BYTES + ${LIST_ITEM_HEADROOM} (the largest event)`
    }])
  }
  const reportSender = reportSenderOf(e)
  const spf = spfOf(e.OB_SPF)
  const publicUrl = (e.OB_PUBLIC_URL ?? `http://127.0.0.1:${e.OB_HTTP_PORT}`).replace(/\/+$/, '')
  const mxHost = mxHostOf(e.OB_MX_HOST, publicUrl)
  const redisUrl = e.REDIS_URL ?? 'redis://127.0.0.1:6379'
  let redisTarget: RedisTarget
  try {
    redisTarget = parseRedisUrl(redisUrl)
  } catch (err) {
    if (!(err instanceof RedisUrlError)) throw err
    throw new ConfigError([{ variable: 'REDIS_URL', message: err.message }])
  }
  const config: Config = {
    role: e.OB_ROLE,
    http: { host: e.OB_HTTP_HOST, port: e.OB_HTTP_PORT, publicUrl, ...(mxHost !== undefined ? { mxHost } : {}), trustedProxies },
    metrics: {
      host: e.OB_METRICS_HOST,
      port: e.OB_METRICS_PORT,
      ...(e.OB_METRICS_TOKEN !== undefined ? { token: e.OB_METRICS_TOKEN } : {})
    },
    api: { listMaxBytes: e.OB_API_LIST_MAX_BYTES },
    eventStream: { maxPerKey: e.OB_EVENT_STREAM_MAX_PER_KEY, maxPerAddress: e.OB_EVENT_STREAM_MAX_PER_ADDRESS },
    stuckAfterMs: e.OB_STUCK_AFTER_MS,
    messageContent: { retentionDays: e.OB_MESSAGE_CONTENT_RETENTION_DAYS },
    audit: { retentionDays: e.OB_AUDIT_RETENTION_DAYS },
    nats: {
      servers: (e.NATS_URL ?? 'nats://127.0.0.1:4222').split(',').map((s) => s.trim()).filter(Boolean),
      replicas: e.OB_NATS_REPLICAS,
      configured: e.NATS_URL !== undefined,
      publishTimeoutMs: e.OB_PUBLISH_TIMEOUT_MS,
      storeBytes: e.OB_NATS_STORE_MB * 1024 * 1024
    },
    redis: { url: redisUrl, target: redisTarget, configured: e.REDIS_URL !== undefined, policyCheckMs: e.OB_REDIS_POLICY_CHECK_MS },
    smtp: {
      inboundHost: e.OB_SMTP_INBOUND_HOST,
      inboundPort: e.OB_SMTP_INBOUND_PORT,
      inboundTlsCert: e.OB_SMTP_INBOUND_TLS_CERT,
      inboundTlsKey: e.OB_SMTP_INBOUND_TLS_KEY,
      inboundMaxConnections: e.OB_SMTP_INBOUND_MAX_CONNECTIONS,
      inboundMaxConnectionsPerAddress: e.OB_SMTP_INBOUND_MAX_CONNECTIONS_PER_ADDRESS,
      inboundSessionDeadlineMs: e.OB_SMTP_INBOUND_SESSION_DEADLINE_MS,
      relay: e.OB_SMTP_RELAY,
      relayTls: e.OB_SMTP_RELAY_TLS,
      caFile: e.OB_SMTP_CA_FILE,
      mtaStsPort: e.OB_MTA_STS_PORT,
      tlsReportCheckMs: e.OB_TLSRPT_CHECK_MS,
      ...(reportSender !== undefined ? { reportSender } : {}),
      outboundPort: e.OB_SMTP_OUTBOUND_PORT,
      allowPrivate: e.OB_SMTP_ALLOW_PRIVATE,
      poolConnections: e.OB_SMTP_POOL_CONNECTIONS,
      egressShaping: e.OB_EGRESS_SHAPING === 'on',
      egressRecoverEveryMs: e.OB_EGRESS_RECOVER_EVERY_MS,
      egressConnectionHoldMs: e.OB_EGRESS_CONNECTION_HOLD_MS
    },
    inbound: {
      eventMaxBytes: e.OB_INBOUND_EVENT_MAX_BYTES,
      quota: {
        windowS: e.OB_INBOUND_QUOTA_WINDOW_S,
        routeMessages: e.OB_INBOUND_ROUTE_MAX_MESSAGES,
        routeBytes: e.OB_INBOUND_ROUTE_MAX_BYTES,
        senderMessages: e.OB_INBOUND_SENDER_MAX_MESSAGES,
        senderBytes: e.OB_INBOUND_SENDER_MAX_BYTES
      }
    },
    submission: {
      enabled: e.OB_SMTP_SUBMISSION_PORT !== 0,
      host: e.OB_SMTP_SUBMISSION_HOST,
      port: e.OB_SMTP_SUBMISSION_PORT,
      tlsCertFile: e.OB_SMTP_TLS_CERT_FILE,
      tlsKeyFile: e.OB_SMTP_TLS_KEY_FILE,
      insecureAuth: e.OB_SMTP_SUBMISSION_INSECURE_AUTH,
      maxConnections: e.OB_SMTP_SUBMISSION_MAX_CONNECTIONS,
      maxConnectionsPerAddress: e.OB_SMTP_SUBMISSION_MAX_CONNECTIONS_PER_ADDRESS,
      idleTimeoutMs: e.OB_SMTP_SUBMISSION_IDLE_TIMEOUT_MS,
      sessionDeadlineMs: e.OB_SMTP_SUBMISSION_SESSION_DEADLINE_MS
    },
    bootstrap: { adminKey: e.OB_BOOTSTRAP_ADMIN_KEY, domain: e.OB_BOOTSTRAP_DOMAIN, plan: e.OB_BOOTSTRAP_PLAN },
    plans: { enterpriseRateLimit: e.OB_ENTERPRISE_RATE_LIMIT },
    webhook: {
      caFile: e.OB_WEBHOOK_CA_FILE,
      allowPrivate: e.OB_WEBHOOK_ALLOW_PRIVATE,
      retryScheduleS: seconds(e.OB_WEBHOOK_RETRY_SCHEDULE),
      timeoutMs: e.OB_WEBHOOK_TIMEOUT_MS,
      endpointConcurrency: e.OB_WEBHOOK_ENDPOINT_CONCURRENCY
    },
    delivery: { retryScheduleS: seconds(e.OB_DELIVERY_RETRY_SCHEDULE), hostRatePerS: e.OB_DELIVERY_HOST_RATE },
    domainVerification: e.OB_DOMAIN_VERIFICATION,
    spf,
    dnsServers: e.OB_DNS_SERVERS === undefined ? [] : e.OB_DNS_SERVERS.split(','),
    domainHealth: {
      dnsblZones: e.OB_DNSBL_ZONES === 'none' ? [] : e.OB_DNSBL_ZONES.split(','),
      intervalMs: e.OB_DOMAIN_HEALTH_INTERVAL_MS
    },
    reputation: {
      enabled: e.OB_REPUTATION_GUARD === 'on',
      thresholds: {
        complaintRate: e.OB_REPUTATION_MAX_COMPLAINT_PCT / 100,
        bounceRate: e.OB_REPUTATION_MAX_BOUNCE_PCT / 100,
        minVolume: e.OB_REPUTATION_MIN_VOLUME,
        windowHours: e.OB_REPUTATION_WINDOW_HOURS
      }
    },
    engine: {
      shards: e.OB_ENGINE_SHARDS,
      threads: e.OB_ENGINE_THREADS,
      ackWaitMs: e.OB_ENGINE_ACK_WAIT_MS,
      shardCapacity: e.OB_ENGINE_SHARD_CAPACITY,
      leaseMs: e.OB_SHARD_LEASE_MS,
      sweepMs: e.OB_ENGINE_SWEEP_MS
    },
    secret: e.OB_SECRET,
    tracking: { tokenTtlMs: e.OB_TRACKING_TOKEN_TTL_S * 1000, ratePerMinute: e.OB_TRACKING_RATE_LIMIT },
    dataDir: e.OB_DATA_DIR,
    logLevel: e.OB_LOG_LEVEL,
    shutdownTimeoutMs: e.OB_SHUTDOWN_TIMEOUT_MS
  }
  return deepFreeze(config)
}
