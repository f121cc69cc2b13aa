import { readFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import { ApiError, REDIS_KEYS } from '../../protocol/mod.ts'
import { ScriptBatch } from '../../stores/clients/mod.ts'

const CLAIM_LUA = readFileSync(new URL('../../../gateway/send/idempotency.lua', import.meta.url), 'utf8')
// Deletes the claim only while it is still this request's (a claim that expired may have been taken over).
const RELEASE_LUA = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
// Stores the finished response; a script only so that it can join the batch of its event-loop turn.
const COMPLETE_LUA = "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1"

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000 // 24 h, documented
/** A claim whose request never finished (the gateway died) frees the key after this. */
export const IDEMPOTENCY_CLAIM_TTL_MS = 60_000 // 60 s
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255
// eslint-disable-next-line no-control-regex -- C0 controls and DEL are what this refuses
const CONTROL = /[\x00-\x1f\x7f]/

/** Redis did not answer the idempotency claim. */
export class IdempotencyStoreError extends Error {
  readonly code = 'idempotency_store_unavailable'
  constructor (opts?: ErrorOptions) {
    super('the idempotency store did not answer', opts)
    this.name = 'IdempotencyStoreError'
  }
}

/**
 * What a request whose publish failed leaves under its key: the ids it gave its messages and which of them
 * JetStream confirmed. The retry reuses the ids, so JetStream's duplicate window drops any message that was
 * stored although its PubAck never arrived, and confirmed ones are not published again.
 */
export interface RetryState { ids: Array<string | null>, created_at: string, accepted: number[] }

export interface ClaimedKey {
  state: 'claimed'
  /** Set when this request retries one whose publish failed. */
  previous?: RetryState
  /** The request failed before anything was published: the key is free again. */
  release: () => Promise<void>
  /** A publish failed: keep the ids for the retry (24 h). */
  keepForRetry: (retry: RetryState) => Promise<void>
  complete: (status: number, json: string) => Promise<void>
}

export type Claim =
  | ClaimedKey
  | { state: 'in_flight' }
  | { state: 'done', status: number, json: string }
  | { state: 'mismatch' }

type IdemRedis = Redis & {
  ob_idem_release: (key: string, value: string) => Promise<number>
}

/** 400 for a header value the draft does not allow; returns the key. */
export function checkIdempotencyKey (value: string): string {
  if (value.length > MAX_IDEMPOTENCY_KEY_LENGTH || CONTROL.test(value)) {
    throw new ApiError('validation_error', `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters without control characters.`, {
      field: 'Idempotency-Key', errors: [{ field: 'Idempotency-Key', message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters without control characters` }]
    })
  }
  return value
}

/** SHA-256 over the path and the raw body: the same bytes to the same endpoint are the same request. */
export function fingerprint (path: string, rawBody: Buffer): string {
  return createHash('sha256').update(path).update('\n').update(rawBody).digest('hex')
}

/**
 * Idempotency keys per organisation in Redis. One round trip claims the key (SET NX semantics in Lua) or reads
 * what it holds, so concurrent requests with one key see exactly one winner. Claims and completions of one
 * event-loop turn each travel as one batched script (ScriptBatch), in arrival order.
 */
export class IdempotencyStore {
  private readonly redis: IdemRedis
  private readonly claims: ScriptBatch<[number, string?]>
  private readonly completions: ScriptBatch<number>

  constructor (redis: Redis) {
    const r = redis as unknown as Partial<IdemRedis>
    if (typeof r.ob_idem_release !== 'function') redis.defineCommand('ob_idem_release', { numberOfKeys: 1, lua: RELEASE_LUA })
    this.redis = redis as unknown as IdemRedis
    this.claims = new ScriptBatch(redis, 'ob_idem_claim_batch', CLAIM_LUA)
    this.completions = new ScriptBatch(redis, 'ob_idem_complete_batch', COMPLETE_LUA)
  }

  async claim (orgId: string, key: string, fp: string, token: string): Promise<Claim> {
    const redisKey = REDIS_KEYS.idempotency(orgId, key)
    let r: [number, string?]
    try {
      r = await this.claims.call([redisKey], [fp, token, IDEMPOTENCY_CLAIM_TTL_MS])
    } catch (err) {
      throw new IdempotencyStoreError({ cause: err })
    }
    switch (r[0]) {
      case 0:
      case 4: {
        const pending = 'p' + fp + token
        const claimed: ClaimedKey = {
          state: 'claimed',
          release: async () => { await this.redis.ob_idem_release(redisKey, pending).catch(() => 0) },
          keepForRetry: async (retry) => { await this.redis.set(redisKey, 'r' + fp + JSON.stringify(retry), 'PX', IDEMPOTENCY_TTL_MS).catch(() => null) },
          complete: async (status, json) => { await this.completions.call([redisKey], ['d' + fp + String(status) + json, IDEMPOTENCY_TTL_MS]) }
        }
        if (r[0] === 4) {
          try { claimed.previous = JSON.parse(r[1] ?? '') as RetryState } catch {}
        }
        return claimed
      }
      case 1: return { state: 'in_flight' }
      case 2: {
        const stored = r[1] ?? ''
        return { state: 'done', status: Number(stored.slice(0, 3)), json: stored.slice(3) }
      }
      default: return { state: 'mismatch' }
    }
  }
}
