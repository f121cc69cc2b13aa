import { isKnownProvider } from './providers.ts'

const FIELDS = ['maxConnections', 'messagesPerConnection', 'messagesPerMinute', 'tls'] as const

/**
 * Limits of one lane (one source × one provider), held across the whole cluster: every engine process counts
 * against the same numbers. They are ceilings: warm-up and throttles learned from replies only lower them.
 */
export interface LaneLimits {
  /** SMTP connections open at once from the source to the provider. */
  maxConnections: number
  /** Messages sent over one connection before it is closed and a new one opened. */
  messagesPerConnection: number
  /** Messages per minute from the source to the provider (a GCRA; a slowed lane gets a fraction of it). */
  messagesPerMinute: number
  /** `required`: no message goes over a connection without STARTTLS (it waits and is retried instead). */
  tls: 'opportunistic' | 'required'
}

/*
 * Where the numbers come from. KumoMTA ships the best public set of shaping defaults, gathered from the providers
 * and its users: assets/policy-extras/shaping.toml (maintained; several blocks "PROVIDED DIRECTLY" by the
 * provider) and assets/community/shaping.toml (contributed), github.com/KumoCorp/kumomta, read 2026-11-28 at commit
 * 3ebc1e8585e0. Its `connection_limit` / `provider_connection_limit` and `max_deliveries_per_connection` map to
 * maxConnections and messagesPerConnection; `max_message_rate` (100/s in its default block) to messagesPerMinute.
 * Where a provider publishes nothing, its lane keeps the default: the first replies that ask us to slow down do
 * the rest (reply_rules.ts), and warm-up (warmup.ts) keeps a new source far below these ceilings anyway.
 */
const KUMO_DEFAULT_RATE_PER_MIN = 6000 // KumoMTA ["default"] max_message_rate = "100/s"

/** The `default` entry applies to every site (an MX set no provider claims). */
const DEFAULT: LaneLimits = Object.freeze({
  maxConnections: 10, // KumoMTA ["default"] connection_limit = 10
  messagesPerConnection: 100, // KumoMTA ["default"] max_deliveries_per_connection = 100
  messagesPerMinute: KUMO_DEFAULT_RATE_PER_MIN,
  tls: 'opportunistic' // KumoMTA ["default"] enable_tls = "Opportunistic": many small sites still lack STARTTLS
} as const)

export const DEFAULT_LIMITS: Readonly<Record<string, Readonly<LaneLimits>>> = deepFreeze({
  default: DEFAULT,
  google: {
    maxConnections: 5, // KumoMTA [provider."google"] provider_connection_limit = 5
    messagesPerConnection: 50, // KumoMTA [provider."google"] max_deliveries_per_connection = 50
    messagesPerMinute: KUMO_DEFAULT_RATE_PER_MIN, // KumoMTA rollups guide: google provider_max_message_rate = "100/s"
    // Google's sender guidelines (support.google.com/a/answer/81126): "Use a TLS connection for transmitting
    // email"; KumoMTA: Google tempfails and rate limits senders without TLS, so enable_tls = 'Required'
    tls: 'required'
  },
  microsoft: {
    maxConnections: 5, // KumoMTA [provider."outlook"] and [provider."office365"] provider_connection_limit = 5
    messagesPerConnection: 50, // KumoMTA outlook / office365 max_deliveries_per_connection = 50
    messagesPerMinute: KUMO_DEFAULT_RATE_PER_MIN, // not published: KumoMTA's default
    tls: 'opportunistic' // KumoMTA sets no TLS requirement for Microsoft
  },
  yahoo: {
    maxConnections: 10, // not published: KumoMTA's default connection_limit
    messagesPerConnection: 20, // KumoMTA [provider."yahoo"] max_deliveries_per_connection = 20, "PROVIDED BY YAHOO! DIRECTLY"
    messagesPerMinute: KUMO_DEFAULT_RATE_PER_MIN, // not published: KumoMTA's default
    tls: 'opportunistic' // KumoMTA sets no TLS requirement for Yahoo
  },
  apple: {
    maxConnections: 10, // KumoMTA [provider."apple"] provider_connection_limit = 10 (support.apple.com/en-us/102322)
    messagesPerConnection: 5, // KumoMTA [provider."apple"] max_deliveries_per_connection = 5
    messagesPerMinute: KUMO_DEFAULT_RATE_PER_MIN, // not published: KumoMTA's default
    tls: 'opportunistic' // KumoMTA sets no TLS requirement for Apple
  },
  gmx: {
    maxConnections: 4, // KumoMTA community [provider."gmx.net_web.de"] connection_limit = 4
    messagesPerConnection: 20, // KumoMTA community gmx.net_web.de 20 (mail.com, "PROVIDED DIRECTLY", allows 100: the lower wins)
    messagesPerMinute: KUMO_DEFAULT_RATE_PER_MIN, // not published: KumoMTA's default
    tls: 'required' // KumoMTA community gmx.net_web.de enable_tls = "Required"
  },
  orange: {
    maxConnections: 2, // KumoMTA [provider."orange"] provider_connection_limit = 2
    messagesPerConnection: 100, // KumoMTA [provider."orange"] max_deliveries_per_connection = 100
    messagesPerMinute: KUMO_DEFAULT_RATE_PER_MIN, // not published: KumoMTA's default
    tls: 'required' // KumoMTA [provider."orange"] enable_tls = "Required"
  },
  comcast: {
    maxConnections: 25, // KumoMTA ["comcast.net"] connection_limit = 25, "PROVIDED DIRECTLY BY COMCAST"
    messagesPerConnection: 1000, // KumoMTA ["comcast.net"] max_deliveries_per_connection = 1000
    messagesPerMinute: KUMO_DEFAULT_RATE_PER_MIN, // not published: KumoMTA's default
    tls: 'required' // KumoMTA ["comcast.net"] enable_tls = "Required"
  },
  zoho: DEFAULT, // nothing published: the default
  fastmail: DEFAULT, // nothing published: the default
  protonmail: DEFAULT, // nothing published: the default
  yandex: DEFAULT, // nothing published: the default
  mailru: DEFAULT // nothing published: the default
})

function deepFreeze (table: Record<string, LaneLimits>): Readonly<Record<string, Readonly<LaneLimits>>> {
  for (const limits of Object.values(table)) Object.freeze(limits)
  return Object.freeze(table)
}

/**
 * Operator overrides by provider id: a provider's id (`google`), `default` (every site), or one site's id
 * (`site:mx1.example.net,mx2.example.net`). A field left out keeps the value below it.
 */
export type LimitOverrides = Readonly<Record<string, Partial<LaneLimits>>>

/**
 * The limits of a lane to `provider`: for a provider of PROVIDERS, its defaults with `overrides[provider]` over them
 * (`overrides.default` does not apply: it is about sites, and a provider's own numbers are more specific); for a
 * site (or an id no provider has), DEFAULT_LIMITS.default, then `overrides.default`, then `overrides[site]`. A
 * source's own overrides (`sourceOverrides`, the lane's source) go over all of that by the same rule: its entry for
 * the provider, or for a site its `default` entry and then its entry for the site.
 */
export function limitsFor (provider: string, overrides?: LimitOverrides, sourceOverrides?: LimitOverrides): LaneLimits {
  const known = isKnownProvider(provider) && DEFAULT_LIMITS[provider] !== undefined
  const layersOf = (table: LimitOverrides | undefined): Array<Partial<LaneLimits> | undefined> => known
    ? [own(table, provider)]
    : [own(table, 'default'), provider === 'default' ? undefined : own(table, provider)]
  const layers = [known ? DEFAULT_LIMITS[provider] : DEFAULT_LIMITS.default, ...layersOf(overrides), ...layersOf(sourceOverrides)]
  const out = { ...DEFAULT }
  for (const layer of layers) {
    if (layer === undefined) continue
    // a field present but undefined (a spread partial) keeps the value below it
    for (const key of FIELDS) if (layer[key] !== undefined) (out as Record<string, unknown>)[key] = layer[key]
  }
  return out
}

function own (overrides: LimitOverrides | undefined, key: string): Partial<LaneLimits> | undefined {
  return overrides !== undefined && Object.hasOwn(overrides, key) ? overrides[key] : undefined
}

/** Largest accepted values: beyond them a number is a typo, not a plan. */
export const LIMIT_MAXIMA = Object.freeze({
  maxConnections: 1000,
  messagesPerConnection: 10_000,
  messagesPerMinute: 1_000_000
})
