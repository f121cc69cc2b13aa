import { ApiError, type ErrorCode } from '../../protocol/mod.ts'
import type { Reply, RequestContext } from '../http/route.ts'
import {
  IdempotencyStoreError, checkIdempotencyKey, fingerprint, type Claim, type ClaimedKey, type RetryState
} from './idempotency_store.ts'

const JSON_TYPE = 'application/json'
const REPLAYED = { 'Idempotent-Replayed': 'true' }
/** Failures after a publish was attempted whose retry must reuse the message ids: the publish may have been stored. */
const RETRY_KEEPS_IDS = new Set<ErrorCode>(['service_unavailable', 'queue_full'])

/** What a handler run under an Idempotency-Key is given. */
export interface IdempotentRun {
  /** What an earlier request with this key whose publish failed left for its retry, if one did. */
  readonly previous: RetryState | undefined
  /**
   * Filled by a handler that publishes: the ids it gives its messages (set just before publishing) and which of
   * them JetStream confirmed. When the handler then fails with `service_unavailable` or `queue_full`, the key keeps
   * them for the retry (24 h), so the retry reuses the ids and publishes nothing twice; otherwise a failure frees it.
   */
  readonly retry: RetryState
}

export interface IdempotentOptions {
  /** Maps what the handler or the claim threw to the error answered. @default the error as thrown */
  toError?: (err: unknown) => unknown
}

/**
 * Runs a handler that changes state (`path`: the request's path, with its ids) under the request's Idempotency-Key,
 * the one wrapper of every endpoint that takes one: without a key it simply runs; with one, the first request runs
 * and its answer is kept 24 h, a retry with the same key and body gets that answer again (`Idempotent-Replayed:
 * true`) and changes nothing, the same key with a different body is 422 `idempotency_key_reused`, and one still
 * running is 409 `conflict`. A request that failed leaves the key free for its retry, or holding the ids of the
 * messages it tried to publish (see IdempotentRun.retry).
 */
export async function idempotent (
  ctx: RequestContext, path: string, work: (run: IdempotentRun) => Promise<Reply>, options: IdempotentOptions = {}
): Promise<Reply> {
  const toError = options.toError ?? ((err: unknown) => err)
  const headerValue = ctx.headers.idempotencyKey
  if (headerValue === '') {
    try {
      return await work({ previous: undefined, retry: emptyRetryState() })
    } catch (err) {
      throw toError(err)
    }
  }
  const key = checkIdempotencyKey(headerValue)
  let claimed
  try {
    // The path is part of the fingerprint: one key on two webhooks is two different requests.
    claimed = await ctx.deps.idempotency.claim(ctx.auth.org.id, key, fingerprint(path, ctx.rawBody), ctx.requestId)
  } catch (err) {
    if (!(err instanceof IdempotencyStoreError)) throw toError(err)
    throw new ApiError('service_unavailable', 'The idempotency store is unavailable; retry shortly.', { cause: err, retryAfter: 1 })
  }
  const claim = claimedOrAnswer(claimed)
  if (!('state' in claim)) return claim
  const run: IdempotentRun = { previous: claim.previous, retry: emptyRetryState() }
  let reply: Reply
  try {
    reply = await work(run)
  } catch (err) {
    const failure = toError(err)
    // Ids are set just before publishing, so a failure with ids means a publish was attempted (with a full
    // store, some messages of a batch may have been queued before it filled: the retry must not queue them again).
    const publishAttempted = run.retry.ids.length > 0
    if (publishAttempted && failure instanceof ApiError && RETRY_KEEPS_IDS.has(failure.code)) await claim.keepForRetry(run.retry)
    else await claim.release()
    throw failure
  }
  const json = JSON.stringify(reply.body ?? null)
  await claim.complete(reply.status, json).catch((err: unknown) => {
    // The change is made; losing the record only means a retry with this key is not recognised.
    ctx.deps.log.error({ err, requestId: ctx.requestId }, 'storing the idempotent response failed')
  })
  return { status: reply.status, raw: { contentType: JSON_TYPE, data: json } }
}

function emptyRetryState (): RetryState {
  return { ids: [], created_at: '', accepted: [] }
}

/**
 * What a claim on an Idempotency-Key answers before any work: the stored response of a finished request
 * (`Idempotent-Replayed: true`), 409 `conflict` for one still running, 422 `idempotency_key_reused` for another
 * body; or the claim itself, for the request to run.
 */
function claimedOrAnswer (claim: Claim): ClaimedKey | Reply {
  switch (claim.state) {
    case 'done':
      return { status: claim.status, headers: REPLAYED, raw: { contentType: JSON_TYPE, data: claim.json } }
    case 'in_flight':
      throw new ApiError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly.', {
        field: 'Idempotency-Key'
      })
    case 'mismatch':
      throw new ApiError('idempotency_key_reused', undefined, { field: 'Idempotency-Key' })
  }
  return claim
}
