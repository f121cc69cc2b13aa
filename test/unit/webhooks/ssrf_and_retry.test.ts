import { test } from 'node:test'
import assert from 'node:assert/strict'
import { checkedAddress, SsrfBlockedError } from '../../../webhooks/ssrf.ts'
import { retryDelayMs, maxAttempts, RETRY_JITTER } from '../../../webhooks/retry.ts'
import { subscribes } from '../../../webhooks/fanout.ts'
import { deliverable, held } from '../../../webhooks/job_eligibility.ts'
import type { WebhookJob } from '../../../stores/webhooks/mod.ts'
import type { WebhookRecord } from '../../../protocol/mod.ts'

test('a name is refused when any of its addresses is refused, unless private targets are allowed', async () => {
  const resolve = async (host: string): Promise<Array<{ address: string, family: 4 | 6 }>> =>
    host === 'mixed.test'
      ? [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.5', family: 4 }]
      : [{ address: '93.184.216.34', family: 4 }]
  await assert.rejects(checkedAddress('mixed.test', resolve, false), SsrfBlockedError)
  assert.deepEqual(await checkedAddress('public.test', resolve, false), { address: '93.184.216.34', family: 4 })
  assert.deepEqual(await checkedAddress('mixed.test', resolve, true), { address: '93.184.216.34', family: 4 })
  await assert.rejects(checkedAddress('[::1]', resolve, false), (e: Error) => (e as SsrfBlockedError).code === 'ssrf_blocked')
})

test('retry delays follow the schedule within ±10 % and end with it', () => {
  const schedule = [60, 300, 1800]
  assert.equal(maxAttempts(schedule), 4)
  assert.equal(retryDelayMs(schedule, 1, 0.5), 60_000)
  assert.equal(retryDelayMs(schedule, 1, 0), 60_000 * (1 - RETRY_JITTER))
  assert.ok(retryDelayMs(schedule, 2, 0.999999)! <= 300_000 * (1 + RETRY_JITTER))
  assert.equal(retryDelayMs(schedule, 3, 0.5), 1_800_000)
  assert.equal(retryDelayMs(schedule, 4, 0.5), undefined)
})

test('subscriptions: inbound is an alias of inbound.received', () => {
  assert.equal(subscribes(['inbound'], 'inbound.received'), true)
  assert.equal(subscribes(['inbound.received'], 'inbound.received'), true)
  assert.equal(subscribes(['delivered'], 'inbound.received'), false)
  assert.equal(subscribes(['delivered', 'opened'], 'opened'), true)
  assert.equal(subscribes(['inbound'], 'delivered'), false)
})

test('a job is dropped for a deleted or failed webhook and for events fanned out before the last failure; ' +
  'one owed to a paused webhook waits', () => {
  const wh: WebhookRecord = { id: 'wh_1', org_id: 'org_1', url: 'https://x.test/', events: ['delivered'], secret: 's', status: 'active', created_at: '', updated_at: '' }
  const job: WebhookJob = {
    event: { id: 'evt_1', type: 'delivered', timestamp: '', data: {} },
    org_id: 'org_1', webhook_id: 'wh_1', attempt: 1, due_at: 0, created_at: Date.parse('2026-01-01T00:00:00Z')
  }
  assert.equal(deliverable(job, wh), true)
  assert.equal(deliverable(job, undefined), false)
  assert.equal(deliverable(job, { ...wh, status: 'paused' }), false)
  assert.equal(deliverable(job, { ...wh, status: 'failed' }), false)
  assert.equal(deliverable({ ...job, test: true }, { ...wh, status: 'paused' }), true)
  assert.equal(deliverable(job, { ...wh, failed_at: '2026-01-01T00:00:01Z' }), false, 'revived, but the event predates the failure')
  assert.equal(deliverable(job, { ...wh, failed_at: '2025-12-31T23:59:59Z' }), true)
  assert.equal(held(job, { ...wh, status: 'paused' }), true, 'owed to a paused webhook: waits for it')
  assert.equal(held(job, wh), false)
  assert.equal(held(job, undefined), false)
  assert.equal(held(job, { ...wh, status: 'failed' }), false)
  assert.equal(held({ ...job, test: true }, { ...wh, status: 'paused' }), false)
  assert.equal(held(job, { ...wh, status: 'paused', failed_at: '2026-01-01T00:00:01Z' }), false, 'predates the failure: dropped')
})
