import { Type, type Static } from 'typebox'
import { Tag, addressDomain } from './send.ts'
import { StreamId, TRANSACTIONAL_STREAM, isStreamId } from './message_streams.ts'

/** At most this many tags, and this many domains, in one webhook's filters. */
export const MAX_WEBHOOK_FILTER_TAGS = 20
export const MAX_WEBHOOK_FILTER_DOMAINS = 20
export const MAX_WEBHOOK_FILTER_STREAMS = 21

export const WEBHOOK_ENVIRONMENTS = ['live', 'test', 'all'] as const
export type WebhookEnvironment = (typeof WEBHOOK_ENVIRONMENTS)[number]

/**
 * What a webhook receives beyond its event types. Every kind is optional; an event must match every kind given
 * (AND) and, within a kind, any one value (OR).
 */
export const WebhookFilters = Type.Object({
  tags: Type.Optional(Type.Array(Tag, {
    minItems: 1,
    maxItems: MAX_WEBHOOK_FILTER_TAGS,
    description: `Any of these message tags (at most ${MAX_WEBHOOK_FILTER_TAGS}); events without tags do not match`,
    errorMessage: `must be an array of 1 to ${MAX_WEBHOOK_FILTER_TAGS} tags`
  })),
  domains: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
    minItems: 1,
    maxItems: MAX_WEBHOOK_FILTER_DOMAINS,
    description: `Any of these sending domains of the organisation (at most ${MAX_WEBHOOK_FILTER_DOMAINS}); ` +
      'events without a sending domain (inbound.received) do not match',
    errorMessage: `must be an array of 1 to ${MAX_WEBHOOK_FILTER_DOMAINS} domain names`
  })),
  streams: Type.Optional(Type.Array(StreamId, {
    minItems: 1,
    maxItems: MAX_WEBHOOK_FILTER_STREAMS,
    description: 'Any of these message streams (`transactional` or broadcast stream ids); events of no message ' +
      '(inbound.received, domain.health_changed) do not match',
    errorMessage: `must be an array of 1 to ${MAX_WEBHOOK_FILTER_STREAMS} stream ids`
  })),
  environment: Type.Optional(Type.Enum([...WEBHOOK_ENVIRONMENTS], {
    description: '`live` (sent with ob_live_ keys, and every event of no message), `test` (sandbox) or `all` (the default)'
  }))
}, {
  additionalProperties: false,
  description: 'Every kind is optional; an event must match each kind given (AND), and any one value within a kind (OR). ' +
    'On PATCH, replaces the filters whole (`{}` removes them).'
})
export type WebhookFilters = Static<typeof WebhookFilters>

/** What the fan-out knows of an event to match it: all of it carried by the event record, nothing read. */
export interface EventAttributes {
  environment: 'live' | 'test'
  /** The sending domain (lower case); undefined for events of no sending domain. */
  domain?: string
  tags?: readonly unknown[]
  /** The message stream; undefined for events of no sent message. */
  stream?: string
}

/**
 * What the filters read of an event, from the event alone: its environment, its tags (`data.tags`), and its sending
 * domain: `domain` when the record names it, else the domain a `domain.health_changed` event is about, else the
 * domain of `data.from` (events stored before records named their domain). Inbound mail has no sending domain.
 */
export function eventAttributes (
  type: string, data: Readonly<Record<string, unknown>>, environment: 'live' | 'test', domain?: string
): EventAttributes {
  const tags = data.tags
  let d = domain
  if (d === undefined && type === 'domain.health_changed' && typeof data.domain === 'string') d = data.domain.toLowerCase()
  if (d === undefined && type !== 'inbound.received' && typeof data.from === 'string') d = addressDomain(data.from)
  // an event of a sent message stored before streams (no `stream`) is of the transactional stream
  const stream = isStreamId(data.stream)
    ? data.stream
    : type !== 'inbound.received' && typeof data.message_id === 'string' ? TRANSACTIONAL_STREAM : undefined
  return {
    environment,
    ...(d !== undefined && d !== '' ? { domain: d } : {}),
    ...(Array.isArray(tags) ? { tags } : {}),
    ...(stream !== undefined ? { stream } : {})
  }
}

/** A webhook's filters as Sets, made once per stored record (see `filterOf`). */
interface CompiledFilter {
  tags?: ReadonlySet<string>, domains?: ReadonlySet<string>, streams?: ReadonlySet<string>, environment?: 'live' | 'test'
}

const compiled = new WeakMap<WebhookFilters, CompiledFilter>()

function compile (f: WebhookFilters): CompiledFilter {
  let c = compiled.get(f)
  if (c === undefined) {
    c = {
      ...(f.tags !== undefined ? { tags: new Set(f.tags) } : {}),
      ...(f.domains !== undefined ? { domains: new Set(f.domains.map((d) => d.toLowerCase())) } : {}),
      ...(f.streams !== undefined ? { streams: new Set(f.streams) } : {}),
      ...(f.environment === 'live' || f.environment === 'test' ? { environment: f.environment } : {})
    }
    compiled.set(f, c)
  }
  return c
}

/**
 * Whether an event passes a webhook's filters (undefined: no filters, everything passes). The Sets are made once per
 * filters object (records are replaced, never changed in place, when a webhook changes), so a match costs one lookup
 * per kind, plus one per tag of the event (at most 10).
 */
export function matchesFilters (filters: WebhookFilters | undefined, e: EventAttributes): boolean {
  if (filters === undefined) return true
  const f = compile(filters)
  if (f.environment !== undefined && f.environment !== e.environment) return false
  if (f.domains !== undefined && (e.domain === undefined || !f.domains.has(e.domain))) return false
  if (f.streams !== undefined && (e.stream === undefined || !f.streams.has(e.stream))) return false
  if (f.tags !== undefined) {
    const tags = f.tags
    if (!Array.isArray(e.tags) || !e.tags.some((t) => typeof t === 'string' && tags.has(t))) return false
  }
  return true
}

/** The filters as stored: each list once, domains in lower case; undefined when none is given. */
export function normalizedFilters (f: WebhookFilters | undefined): WebhookFilters | undefined {
  if (f === undefined) return undefined
  const out: WebhookFilters = {
    ...(f.tags !== undefined ? { tags: [...new Set(f.tags)] } : {}),
    ...(f.domains !== undefined ? { domains: [...new Set(f.domains.map((d) => d.toLowerCase()))] } : {}),
    ...(f.streams !== undefined ? { streams: [...new Set(f.streams)] } : {}),
    ...(f.environment !== undefined && f.environment !== 'all' ? { environment: f.environment } : {})
  }
  return Object.keys(out).length === 0 ? undefined : out
}
