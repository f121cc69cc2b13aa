import { ApiError } from '../../protocol/mod.js';
import { IdempotencyStoreError, checkIdempotencyKey, fingerprint } from './idempotency_store.js';
const JSON_TYPE = 'application/json';
const REPLAYED = { 'Idempotent-Replayed': 'true' };
/** Failures after a publish was attempted whose retry must reuse the message ids: the publish may have been stored. */
const RETRY_KEEPS_IDS = new Set(['service_unavailable', 'queue_full']);
/**
 * Runs a handler that changes state (`path`: the request's path, with its ids) under the request's Idempotency-Key,
 * the one wrapper of every endpoint that takes one: without a key it simply runs; with one, the first request runs
 * and its answer is kept 24 h, a retry with the same key and body gets that answer again (`Idempotent-Replayed:
 * true`) and changes nothing, the same key with a different body is 422 `idempotency_key_reused`, and one still
 * running is 409 `conflict`. A request that failed leaves the key free for its retry, or holding the ids of the
 * messages it tried to publish (see IdempotentRun.retry).
 */
export async function idempotent(ctx, path, work, options = {}) {
    const toError = options.toError ?? ((err) => err);
    const headerValue = ctx.headers.idempotencyKey;
    if (headerValue === '') {
        try {
            return await work({ previous: undefined, retry: emptyRetryState() });
        }
        catch (err) {
            throw toError(err);
        }
    }
    const key = checkIdempotencyKey(headerValue);
    let claimed;
    try {
        // The path is part of the fingerprint: one key on two webhooks is two different requests.
        claimed = await ctx.deps.idempotency.claim(ctx.auth.org.id, key, fingerprint(path, ctx.rawBody), ctx.requestId);
    }
    catch (err) {
        if (!(err instanceof IdempotencyStoreError))
            throw toError(err);
        throw new ApiError('service_unavailable', 'The idempotency store is unavailable; retry shortly.', { cause: err, retryAfter: 1 });
    }
    const claim = claimedOrAnswer(claimed);
    if (!('state' in claim))
        return claim;
    const run = { previous: claim.previous, retry: emptyRetryState() };
    let reply;
    try {
        reply = await work(run);
    }
    catch (err) {
        const failure = toError(err);
        // Ids are set just before publishing, so a failure with ids means a publish was attempted (with a full
        // store, some messages of a batch may have been queued before it filled: the retry must not queue them again).
        const publishAttempted = run.retry.ids.length > 0;
        if (publishAttempted && failure instanceof ApiError && RETRY_KEEPS_IDS.has(failure.code))
            await claim.keepForRetry(run.retry);
        else
            await claim.release();
        throw failure;
    }
    const json = JSON.stringify(reply.body ?? null);
    await claim.complete(reply.status, json).catch((err) => {
        // The change is made; losing the record only means a retry with this key is not recognised.
        ctx.deps.log.error({ err, requestId: ctx.requestId }, 'storing the idempotent response failed');
    });
    return { status: reply.status, raw: { contentType: JSON_TYPE, data: json } };
}
function emptyRetryState() {
    return { ids: [], created_at: '', accepted: [] };
}
/**
 * What a claim on an Idempotency-Key answers before any work: the stored response of a finished request
 * (`Idempotent-Replayed: true`), 409 `conflict` for one still running, 422 `idempotency_key_reused` for another
 * body; or the claim itself, for the request to run.
 */
function claimedOrAnswer(claim) {
    switch (claim.state) {
        case 'done':
            return { status: claim.status, headers: REPLAYED, raw: { contentType: JSON_TYPE, data: claim.json } };
        case 'in_flight':
            throw new ApiError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly.', {
                field: 'Idempotency-Key'
            });
        case 'mismatch':
            throw new ApiError('idempotency_key_reused', undefined, { field: 'Idempotency-Key' });
    }
    return claim;
}
//# sourceMappingURL=idempotent.js.map