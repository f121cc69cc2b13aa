import { ApiError } from '../../protocol/mod.ts'
import { IdempotencyStoreError, checkIdempotencyKey, fingerprint, type Claim, type ClaimedKey } from '../send/idempotency.ts'
import type { Reply, RequestContext } from './route.ts'

const JSON_TYPE = 'application/json'
const REPLAYED = { 'Idempotent-Replayed': 'true' }

/**
 * What a claim on an Idempotency-Key answers before any work: the stored response of a finished request
 * (`Idempotent-Replayed: true`), 409 `conflict` for one still running, 422 `idempotency_key_reused` for another
 * body; or the claim itself, for the request to run.
 */
export function claimedOrAnswer (claim: Claim): ClaimedKey | Reply {
  switch (claim.state) {
    case 'done':
      return { status: claim.status, headers: REPLAYED, raw: { contentType: JSON_TYPE, data: claim.json } }
    case 'in_flight':
      throw new ApiError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly.', { field: 'Idempotency-Key' })
    case 'mismatch':
      throw new ApiError('idempotency_key_reused', undefined, { field: 'Idempotency-Key' })
  }
  return claim
}

/**
 * Runs a handler that changes state (`path`: the request's path, with its ids) under the request's Idempotency-Key, as the send endpoints do: without a
 * key it simply runs; with one, the first request runs and its 2xx answer is kept 24 h, a retry with the same
 * key and body gets that answer again (`Idempotent-Replayed: true`) and changes nothing, the same key with a
 * different body is 422 `idempotency_key_reused`, and one still running is 409 `conflict`. A request that
 * failed leaves the key free for its retry.
 */
export async function idempotent (ctx: RequestContext, path: string, work: () => Promise<Reply>): Promise<Reply> {
  const headerValue = ctx.headers.idempotencyKey
  if (headerValue === '') return await work()
  const key = checkIdempotencyKey(headerValue)
  let claimed
  try {
    // The path is part of the fingerprint: one key on two webhooks is two different requests.
    claimed = await ctx.deps.idempotency.claim(ctx.auth.org.id, key, fingerprint(path, ctx.rawBody), ctx.requestId)
  } catch (err) {
    if (err instanceof IdempotencyStoreError) throw new ApiError('service_unavailable', 'The idempotency store is unavailable; retry shortly.', { cause: err, retryAfter: 1 })
    throw err
  }
  const claim = claimedOrAnswer(claimed)
  if (!('state' in claim)) return claim
  let reply: Reply
  try {
    reply = await work()
  } catch (err) {
    await claim.release()
    throw err
  }
  const json = JSON.stringify(reply.body ?? null)
  await claim.complete(reply.status, json).catch((err: unknown) => {
    // The change is made; losing the record only means a retry with this key is not recognised.
    ctx.deps.log.error({ err, requestId: ctx.requestId }, 'storing the idempotent response failed')
  })
  return { status: reply.status, raw: { contentType: JSON_TYPE, data: json } }
}
