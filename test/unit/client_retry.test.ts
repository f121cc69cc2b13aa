import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DEFAULT_RETRY, OutboxApiError, retryDelay } from '../../client/src/mod.ts'

const err = (status: number, extra: Record<string, unknown> = {}): OutboxApiError =>
  new OutboxApiError(status, { code: 'x', message: 'x', ...extra })

test('never retries 400, 401, 403, 404, 409, 422', () => {
  for (const s of [400, 401, 403, 404, 409, 422]) assert.equal(retryDelay(err(s), 1, DEFAULT_RETRY, true), undefined, String(s))
})

test('429 and 503 wait retry_after first; too long a wait is not waited out', () => {
  assert.equal(retryDelay(err(429, { retry_after: 7 }), 1, DEFAULT_RETRY, false), 7000)
  assert.equal(retryDelay(err(503, { retry_after: 2 }), 1, DEFAULT_RETRY, false), 2000)
  assert.equal(retryDelay(err(429, { retry_after: 61 }), 1, DEFAULT_RETRY, false), undefined)
})

test('500/502/504 back off exponentially with jitter, up to maxAttempts', () => {
  const p = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000, maxAttempts: 5 }
  assert.equal(retryDelay(err(500), 1, p, false, () => 0), 50)
  assert.equal(retryDelay(err(502), 1, p, false, () => 1), 100)
  assert.equal(retryDelay(err(504), 3, p, false, () => 1), 400)
  assert.equal(retryDelay(err(500), 4, p, false, () => 1), 800)
  assert.equal(retryDelay(err(500), 5, p, false, () => 1), undefined)
})

test('network errors are retried only where repeating is safe', () => {
  assert.equal(retryDelay(new TypeError('fetch failed'), 1, DEFAULT_RETRY, false), undefined)
  assert.ok(retryDelay(new TypeError('fetch failed'), 1, DEFAULT_RETRY, true)! > 0)
})

test('Retry-After header is used when the body has no retry_after', () => {
  const e = OutboxApiError.from(429, '{"error":{"code":"rate_limited","message":"slow down"}}',
    new Headers({ 'retry-after': '3', 'x-request-id': 'req_1' }))
  assert.equal(e.retryAfter, 3)
  assert.equal(e.requestId, 'req_1')
  assert.equal(e.code, 'rate_limited')
})
