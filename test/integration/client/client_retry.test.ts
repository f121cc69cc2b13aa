import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox } from '../../helpers/outbox.ts'
import { OutboxClient, OutboxApiError } from '../../../client/src/mod.ts'

let ob: TestOutbox
before(async () => { ob = await TestOutbox.start() })
after(async () => { await ob.close() })

async function exhaust (key: string): Promise<void> {
  // Free plan: 60 per minute with a burst of 60. Spend the burst.
  for (let i = 0; i < 70; i++) {
    const r = await ob.request('GET', '/v1/whoami', { key })
    if (r.status === 429) return
  }
  assert.fail('the free plan never answered 429')
}

test('a real 429 is retried after retry_after, and the call then succeeds', async () => {
  const org = await ob.org('free')
  const retries: Array<{ delayMs: number, error: unknown }> = []
  const client = new OutboxClient({
    apiKey: org.adminKey, baseUrl: ob.baseUrl, retry: { maxRetryAfterMs: 5000, maxAttempts: 5 }, onRetry: (i) => retries.push(i)
  })
  // The bucket refills one request a second: on a slow machine the call after `exhaust` can find it refilled and
  // pass without a 429, so spend it again until the call meets one.
  for (let round = 0; round < 5 && retries.length === 0; round++) {
    await exhaust(org.adminKey)
    const me = await client.whoami.get()
    assert.equal(me.organization_id, org.orgId)
  }
  assert.ok(retries.length >= 1)
  const first = retries[0]!.error
  assert.ok(first instanceof OutboxApiError)
  assert.equal(first.status, 429)
  assert.equal(first.code, 'rate_limited')
  assert.ok(first.retryAfter !== undefined && first.retryAfter >= 1)
  assert.equal(retries[0]!.delayMs, first.retryAfter * 1000, 'waits exactly retry_after')
})

test('a 429 asking for longer than maxRetryAfterMs is thrown with retryAfter, not waited out', async () => {
  const org = await ob.org('free')
  const client = new OutboxClient({ apiKey: org.adminKey, baseUrl: ob.baseUrl, retry: { maxRetryAfterMs: 0 } })
  await exhaust(org.adminKey)
  const err = await client.whoami.get().catch((e: unknown) => e)
  assert.ok(err instanceof OutboxApiError)
  assert.equal(err.status, 429)
  assert.ok(err.retryAfter! >= 1)
})

test('sends carry an Idempotency-Key reused across retries', async () => {
  const org = await ob.org('pro')
  const key = await ob.key(org, ['send', 'read'], 'test')
  const client = new OutboxClient({ apiKey: key, baseUrl: ob.baseUrl })
  const body = { from: `app@${org.domain}`, to: 'someone@example.net', subject: 'Hi', html: '<p>Hi</p>' }
  const idem = `idem-${Date.now()}`
  const a = await client.request<{ id: string }>({ method: 'POST', path: '/v1/messages/send', body, idempotent: true },
    { idempotencyKey: idem })
  const b = await client.request<{ id: string }>({ method: 'POST', path: '/v1/messages/send', body, idempotent: true },
    { idempotencyKey: idem })
  assert.equal(a.id, b.id, 'the same Idempotency-Key gives the same message')
  const c = await client.request<{ id: string }>({ method: 'POST', path: '/v1/messages/send', body, idempotent: true })
  assert.notEqual(c.id, a.id, 'a generated key is fresh per call')
  const bad = await client.request({
    method: 'POST', path: '/v1/messages/send', body: { ...body, from: 'x@elsewhere.example' }, idempotent: true
  }).catch((e: unknown) => e)
  assert.ok(bad instanceof OutboxApiError && bad.status === 403 && bad.code === 'forbidden')
})
