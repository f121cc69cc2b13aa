import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import { ApiError, REDIS_KEYS, type InternalErrorCode } from '../../protocol/mod.ts'
import { ScriptBatch } from '../../stores/clients/mod.ts'
import type { IdempotencyLedger } from './idempotency_ledger.ts'
import { IDEMPOTENCY_LUA as CLAIM_LUA } from './idempotency.lua.ts'

// Deletes the claim only while it is still this request's (a claim that expired may have been taken over).
const RELEASE_LUA = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
// Stores the finished response; a script only so that it can join the batch of its event-loop turn.
const COMPLETE_LUA = "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1"
// Puts the durable copy of a record back in place of this request's claim (and only while the claim is its own).
const RESTORE_LUA = "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end return 1"

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000 // 24 h, documented
/** A claim whose request never finished (the gateway died) frees the key after this. */
export const IDEMPOTENCY_CLAIM_TTL_MS = 60_000 // 60 s
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255
// eslint-disable-next-line no-control-regex -- C0 controls and DEL are what this refuses
const CONTROL = /[\x00-\x1f\x7f]/

/** Redis did not answer the idempotency claim. */
export class IdempotencyStoreError extends Error {
  readonly code = 'idempotency_store_unavailable' satisfies InternalErrorCode
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

type LedgerRead = { found: { value: string, ageMs: number } | undefined } | { err: unknown }

type IdemRedis = Redis & {
  ob_idem_release: (key: string, value: string) => Promise<number>
  ob_idem_restore: (key: string, pending: string, value: string, ttlMs: number) => Promise<number>
}

/** 400 for a header value the draft does not allow; returns the key. */
export function checkIdempotencyKey (value: string): string {
  if (value.length > MAX_IDEMPOTENCY_KEY_LENGTH || CONTROL.test(value)) {
    const rule = `1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters without control characters`
    throw new ApiError('validation_error', `Idempotency-Key must be ${rule}.`, {
      field: 'Idempotency-Key', errors: [{ field: 'Idempotency-Key', message: `must be ${rule}` }]
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
 *
 * Every finished record (and the ids of a failed publish) is also written to the IdempotencyLedger (JetStream KV,
 * 24 h), beside the Redis write, and every claim reads the ledger beside the Redis claim (one round trip to each,
 * at the same time). When Redis claims a key that the ledger knows, Redis lost it (a flush, a new server, a failover
 * to a replica that lagged, an evicted key): the ledger's record answers, and goes back into Redis.
 */
export class IdempotencyStore {
  private readonly redis: IdemRedis
  private readonly claims: ScriptBatch<[number, string?]>
  private readonly completions: ScriptBatch<number>

  constructor (redis: Redis, private readonly ledger: IdempotencyLedger) {
    const r = redis as unknown as Partial<IdemRedis>
    if (typeof r.ob_idem_release !== 'function') redis.defineCommand('ob_idem_release', { numberOfKeys: 1, lua: RELEASE_LUA })
    if (typeof r.ob_idem_restore !== 'function') redis.defineCommand('ob_idem_restore', { numberOfKeys: 1, lua: RESTORE_LUA })
    this.redis = redis as unknown as IdemRedis
    this.claims = new ScriptBatch(redis, 'ob_idem_claim_batch', CLAIM_LUA)
    this.completions = new ScriptBatch(redis, 'ob_idem_complete_batch', COMPLETE_LUA)
  }

  async claim (orgId: string, key: string, fp: string, token: string): Promise<Claim> {
    const redisKey = REDIS_KEYS.idempotency(orgId, key)
    // read beside the claim, so a new key costs no more time than the slower of the two
    const durable: Promise<LedgerRead> = this.ledger.read(orgId, key, Date.now()).then((found) => ({ found }), (err: unknown) => ({ err }))
    let r: [number, string?]
    try {
      r = await this.claims.call([redisKey], [fp, token, IDEMPOTENCY_CLAIM_TTL_MS])
    } catch (err) {
      throw new IdempotencyStoreError({ cause: err })
    }
    switch (r[0]) {
      case 0: return await this.fromLedger(await durable, redisKey, fp, token, this.claimed(orgId, key, redisKey, fp, token))
      case 4: {
        const claimed = this.claimed(orgId, key, redisKey, fp, token)
        try { claimed.previous = JSON.parse(r[1] ?? '') as RetryState } catch {}
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

  private claimed (orgId: string, key: string, redisKey: string, fp: string, token: string): ClaimedKey {
    const pending = 'p' + fp + token
    return {
      state: 'claimed',
      release: async () => { await this.redis.ob_idem_release(redisKey, pending).catch(() => 0) },
      keepForRetry: async (retry) => {
        const value = 'r' + fp + JSON.stringify(retry)
        await Promise.all([
          this.redis.set(redisKey, value, 'PX', IDEMPOTENCY_TTL_MS).catch(() => null),
          this.ledger.write(orgId, key, value).catch(() => {})
        ])
      },
      complete: async (status, json) => {
        const value = 'd' + fp + String(status) + json
        await Promise.all([this.completions.call([redisKey], [value, IDEMPOTENCY_TTL_MS]), this.ledger.write(orgId, key, value)])
      }
    }
  }

  /** Redis claimed the key: if the ledger knows it, Redis lost it, and the ledger's record decides and goes back into Redis. */
  private async fromLedger (durable: LedgerRead, redisKey: string, fp: string, token: string, claimed: ClaimedKey): Promise<Claim> {
    if ('err' in durable) {
      await claimed.release()
      throw new IdempotencyStoreError({ cause: durable.err })
    }
    const found = durable.found
    if (found === undefined) return claimed
    const { value, ageMs } = found
    const restore = async (): Promise<void> => {
      await this.redis.ob_idem_restore(redisKey, 'p' + fp + token, value, Math.max(1, IDEMPOTENCY_TTL_MS - ageMs)).catch(() => 0)
    }
    if (value.slice(1, 65) !== fp) {
      await restore()
      return { state: 'mismatch' }
    }
    if (value[0] === 'd') {
      await restore()
      return { state: 'done', status: Number(value.slice(65, 68)), json: value.slice(68) }
    }
    // a failed publish: this request is its retry, with the ids it gave its messages
    try { claimed.previous = JSON.parse(value.slice(65)) as RetryState } catch {}
    return claimed
  }
}
