import { isIP } from 'node:net'
import type { FieldError } from '../errors.ts'
import type { DomainRecord, OrgRecord } from '../records.ts'
import { LIMIT_MAXIMA } from './shaping.ts'
import { WARMUP_MAXIMA, type WarmupStep } from './warmup.ts'
import { SITE_PREFIX, isKnownProvider } from './providers.ts'

/**
 * The operator's egress configuration as stored in the `ob_egress` KV bucket (keys `source.<name>`, `pool.<name>`,
 * `settings`), and the checks every writer runs on it: the operator API and the CLI call the same functions, so
 * both refuse the same input with the same words. Pure: no I/O.
 */

/** Names of sources and pools: they become KV keys (`source.<name>`), so nothing else may reach them. */
export const EGRESS_NAME_PATTERN = '^[a-z0-9][a-z0-9-]{0,31}$'
const EGRESS_NAME = new RegExp(EGRESS_NAME_PATTERN)
/** The pool that always exists; without a record (or with no sources) it is the host's own address and EHLO name. */
export const DEFAULT_POOL = 'default'
export const POOL_WEIGHT_MIN = 1
export const POOL_WEIGHT_MAX = 100
/** The weight of a source named without one. */
export const DEFAULT_POOL_WEIGHT = 100
/** More sources than this in one pool is a configuration mistake, not a deployment (a /26 is 64 addresses). */
export const MAX_POOL_SOURCES = 64
export const MAX_WARMUP_STEPS = 60
/** A warm-up curve longer than a year is not a warm-up. */
export const MAX_WARMUP_DAY = WARMUP_MAXIMA.day
export const MAX_WARMUP_PER_DAY = WARMUP_MAXIMA.perDay
export const MAX_EHLO_LENGTH = 253

export const TLS_MODES = ['opportunistic', 'required'] as const
export type TlsMode = (typeof TLS_MODES)[number]

/** Bounds of each numeric override: the maxima keep a typo (an extra zero or three) from opening the floodgates. */
export const LIMIT_BOUNDS = {
  maxConnections: { min: 1, max: LIMIT_MAXIMA.maxConnections },
  messagesPerConnection: { min: 1, max: LIMIT_MAXIMA.messagesPerConnection },
  messagesPerMinute: { min: 1, max: LIMIT_MAXIMA.messagesPerMinute }
} as const
export type NumericLimit = keyof typeof LIMIT_BOUNDS
export const LIMIT_KEYS = [...Object.keys(LIMIT_BOUNDS) as NumericLimit[], 'tls'] as const
/**
 * A provider id (`google`), a site (`site:<mx names>`), or `default` (every provider without its own entry). Lower
 * case, no spaces, at most 253 characters.
 */
export const PROVIDER_KEY_PATTERN = '^[a-z0-9][a-z0-9._:,-]{0,252}$'
const PROVIDER_KEY = new RegExp(PROVIDER_KEY_PATTERN)
export const MAX_LIMIT_ENTRIES = 500

export interface EgressSourceRecord {
  name: string
  /** An IPv4 or IPv6 literal this host owns; connections bind to it. */
  address: string
  /** The host name its reverse DNS gives, said in EHLO. */
  ehlo: string
  /** Present while the address warms up: counted from `started_at`, by `steps` or the default curve. */
  warmup?: { started_at: string, steps?: WarmupStep[] }
  /**
   * The operator's limit overrides for this source only, by provider id, site or `default` (sites), over the
   * installation's (EgressSettingsRecord.limits): one address may be held lower (or higher) than its pool's others.
   */
  limits?: Record<string, LimitOverride>
  created_at: string
  updated_at: string
}

export interface PoolMember { source: string, weight: number }

export interface EgressPoolRecord {
  name: string
  sources: PoolMember[]
  created_at: string
  updated_at: string
}

export interface LimitOverride {
  maxConnections?: number
  messagesPerConnection?: number
  messagesPerMinute?: number
  tls?: TlsMode
}

export interface EgressSettingsRecord {
  /** provider id, site, or `default` → the limits that replace the built-in ones for it. */
  limits?: Record<string, LimitOverride>
}

/** The key of each record in the `ob_egress` bucket. */
export const EGRESS_KEYS = {
  source: (name: string): string => `source.${name}`,
  pool: (name: string): string => `pool.${name}`,
  settings: 'settings'
} as const

/** The pool `default` while the operator has not written one: no sources, the host's own address. */
export const IMPLICIT_DEFAULT_POOL: Readonly<EgressPoolRecord> = Object.freeze({
  name: DEFAULT_POOL, sources: [], created_at: '1970-01-01T00:00:00.000Z', updated_at: '1970-01-01T00:00:00.000Z'
})

/**
 * The pool mail of `domain` on `stream` leaves from: the stream's own assignment, else the domain's, else its
 * organisation's, else `default`. The transactional stream (never stored) and a stream deleted since the mail was
 * queued have none: pass `{}`. Resolved at each delivery attempt, so a change applies to mail already queued.
 */
export function egressPoolOf (
  org: Pick<OrgRecord, 'egress_pool'>, domain: Pick<DomainRecord, 'egress_pool'>, stream: { egress_pool?: string } = {}
): string {
  return stream.egress_pool ?? domain.egress_pool ?? org.egress_pool ?? DEFAULT_POOL
}

/** `default`, a provider Outbox knows (protocol/egress/providers.ts: a typo such as `gmail` is refused), or a site. */
export function isProviderKey (value: string): boolean {
  return PROVIDER_KEY.test(value) &&
    (value === 'default' || isKnownProvider(value) || (value.startsWith(SITE_PREFIX) && value.length > SITE_PREFIX.length))
}

export function isEgressName (value: string): boolean {
  return EGRESS_NAME.test(value)
}

/** A host name for EHLO: at least two labels of letters, digits and inner hyphens, lower case. */
export function isEhloName (value: string): boolean {
  if (value.length === 0 || value.length > MAX_EHLO_LENGTH) return false
  const labels = value.split('.')
  return labels.length >= 2 && labels.every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(l)) && !/^\d+$/.test(labels.at(-1)!)
}

/** An IPv4 or IPv6 literal without a zone (`%eth0` names an interface, not an address others see). */
export function isSourceAddress (value: string): boolean {
  return !value.includes('%') && isIP(value) !== 0
}

const isInt = (v: unknown, min: number, max: number): v is number => Number.isInteger(v) && (v as number) >= min && (v as number) <= max
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function unknownFields (value: Record<string, unknown>, known: readonly string[], at: string): FieldError[] {
  return Object.keys(value).filter((k) => !known.includes(k))
    .map((k) => ({ field: at === '' ? k : `${at}.${k}`, message: 'is not a known field' }))
}

/** The fields of a source an operator may set: all of them on create, any of them on change (`partial`). */
export interface SourceInput { address?: string, ehlo?: string, warmup?: { started_at?: string, steps?: WarmupStep[] } | null }

export function warmupErrors (warmup: unknown, at = 'warmup'): FieldError[] {
  if (warmup === null) return []
  if (!isObject(warmup)) return [{ field: at, message: 'must be an object or null' }]
  const out = unknownFields(warmup, ['started_at', 'steps'], at)
  const started = warmup.started_at
  if (started !== undefined && (typeof started !== 'string' || Number.isNaN(Date.parse(started)) || !/^\d{4}-\d\d-\d\dT/.test(started))) {
    out.push({ field: `${at}.started_at`, message: 'must be an ISO 8601 date-time' })
  }
  const steps = warmup.steps
  if (steps === undefined) return out
  if (!Array.isArray(steps) || steps.length === 0 || steps.length > MAX_WARMUP_STEPS) {
    return [...out, { field: `${at}.steps`, message: `must be a list of 1 to ${MAX_WARMUP_STEPS} steps` }]
  }
  let lastDay = 0
  steps.forEach((s: unknown, i) => {
    const f = `${at}.steps[${i}]`
    if (!isObject(s)) { out.push({ field: f, message: 'must be {day, perDay, perHour}' }); return }
    out.push(...unknownFields(s, ['day', 'perDay', 'perHour'], f))
    if (!isInt(s.day, 1, MAX_WARMUP_DAY)) out.push({ field: `${f}.day`, message: `must be an integer from 1 to ${MAX_WARMUP_DAY}` })
    else if (i === 0 && s.day !== 1) out.push({ field: `${f}.day`, message: 'must be 1: the first step is the first day' })
    else if (s.day <= lastDay) out.push({ field: `${f}.day`, message: 'must be later than the step before' })
    else lastDay = s.day
    const range = `must be an integer from 1 to ${MAX_WARMUP_PER_DAY}`
    if (!isInt(s.perDay, 1, MAX_WARMUP_PER_DAY)) out.push({ field: `${f}.perDay`, message: range })
    if (!isInt(s.perHour, 1, MAX_WARMUP_PER_DAY)) out.push({ field: `${f}.perHour`, message: range })
    else if (isInt(s.perDay, 1, MAX_WARMUP_PER_DAY) && s.perHour > s.perDay) {
      out.push({ field: `${f}.perHour`, message: 'must be at most perDay' })
    }
  })
  return out
}

/** Every problem of a source's fields; `partial`: a change, where each field is optional but at least one is given. */
export function sourceInputErrors (input: unknown, partial: boolean): FieldError[] {
  if (!isObject(input)) return [{ field: 'body', message: 'must be an object' }]
  const out = unknownFields(input, partial ? ['address', 'ehlo', 'warmup'] : ['name', 'address', 'ehlo', 'warmup'], '')
  if (!partial) {
    if (typeof input.name !== 'string' || !isEgressName(input.name)) {
      out.push({ field: 'name', message: `must match ${EGRESS_NAME_PATTERN} (lower-case letters, digits, hyphens; at most 32)` })
    }
  } else if (!['address', 'ehlo', 'warmup'].some((k) => k in input)) {
    out.push({ field: 'body', message: 'must change at least one of address, ehlo, warmup' })
  }
  if (!partial || input.address !== undefined) {
    if (typeof input.address !== 'string' || !isSourceAddress(input.address)) {
      out.push({ field: 'address', message: 'must be an IPv4 or IPv6 address literal (such as 192.0.2.10 or 2001:db8::10)' })
    }
  }
  if (!partial || input.ehlo !== undefined) {
    if (typeof input.ehlo !== 'string' || !isEhloName(input.ehlo)) {
      out.push({ field: 'ehlo', message: 'must be a lower-case host name such as mta1.example.com (the address\'s reverse DNS name)' })
    }
  }
  if (input.warmup !== undefined) out.push(...warmupErrors(input.warmup))
  return out
}

/** Every problem of a pool's member list (shape only; whether the sources exist is the writer's check). */
export function poolMembersErrors (name: string, sources: unknown): FieldError[] {
  if (!Array.isArray(sources) || sources.length > MAX_POOL_SOURCES) {
    return [{ field: 'sources', message: `must be a list of at most ${MAX_POOL_SOURCES} sources` }]
  }
  if (sources.length === 0 && name !== DEFAULT_POOL) {
    return [{ field: 'sources', message: `must name at least one source (only the pool ${DEFAULT_POOL} may be empty)` }]
  }
  const out: FieldError[] = []
  const seen = new Set<string>()
  sources.forEach((m: unknown, i) => {
    const f = `sources[${i}]`
    if (!isObject(m)) { out.push({ field: f, message: 'must be {source, weight}' }); return }
    out.push(...unknownFields(m, ['source', 'weight'], f))
    if (typeof m.source !== 'string' || !isEgressName(m.source)) {
      out.push({ field: `${f}.source`, message: `must match ${EGRESS_NAME_PATTERN}` })
    } else if (seen.has(m.source)) {
      out.push({ field: `${f}.source`, message: `names ${m.source} a second time` })
    } else {
      seen.add(m.source)
    }
    if (m.weight !== undefined && !isInt(m.weight, POOL_WEIGHT_MIN, POOL_WEIGHT_MAX)) {
      out.push({ field: `${f}.weight`, message: `must be an integer from ${POOL_WEIGHT_MIN} to ${POOL_WEIGHT_MAX}` })
    }
  })
  return out
}

/** Every problem of one provider's override (`at`: where it sits, for the field names). */
export function limitOverrideErrors (value: unknown, at: string): FieldError[] {
  if (!isObject(value)) return [{ field: at, message: 'must be an object' }]
  const out = unknownFields(value, LIMIT_KEYS, at)
  for (const [k, b] of Object.entries(LIMIT_BOUNDS)) {
    if (value[k] !== undefined && !isInt(value[k], b.min, b.max)) {
      out.push({ field: `${at}.${k}`, message: `must be an integer from ${b.min} to ${b.max}` })
    }
  }
  if (value.tls !== undefined && !(TLS_MODES as readonly unknown[]).includes(value.tls)) {
    out.push({ field: `${at}.tls`, message: `must be one of ${TLS_MODES.join(', ')}` })
  }
  return out
}

/** Every problem of the whole override table (`limits` of EgressSettingsRecord). */
export function limitsErrors (limits: unknown): FieldError[] {
  if (!isObject(limits)) return [{ field: 'limits', message: 'must be an object of provider → limits' }]
  const entries = Object.entries(limits)
  if (entries.length > MAX_LIMIT_ENTRIES) return [{ field: 'limits', message: `must hold at most ${MAX_LIMIT_ENTRIES} providers` }]
  const out: FieldError[] = []
  for (const [provider, value] of entries) {
    if (!isProviderKey(provider)) {
      out.push({ field: `limits.${provider}`, message: `is not a provider id, site or default (${PROVIDER_KEY_PATTERN})` })
      continue
    }
    out.push(...limitOverrideErrors(value, `limits.${provider}`))
  }
  return out
}

/** Parses the CLI's `key=value` words of one provider's override; an empty value (`tls=`) removes that key. */
export function parseLimitAssignments (words: readonly string[]): { set: LimitOverride, unset: string[], errors: FieldError[] } {
  const set: Record<string, unknown> = {}
  const unset: string[] = []
  const errors: FieldError[] = []
  for (const w of words) {
    const eq = w.indexOf('=')
    const key = eq < 0 ? w : w.slice(0, eq)
    if (eq < 0 || !(LIMIT_KEYS as readonly string[]).includes(key)) {
      errors.push({ field: key, message: `must be key=value with key one of ${LIMIT_KEYS.join(', ')}` })
      continue
    }
    const raw = w.slice(eq + 1)
    if (raw === '') unset.push(key)
    else set[key] = key === 'tls' ? raw : /^\d+$/.test(raw) ? Number(raw) : raw
  }
  errors.push(...limitOverrideErrors(set, 'limits').map((e) => ({ ...e, field: e.field.replace(/^limits\./, '') })))
  return { set: set as LimitOverride, unset, errors }
}
