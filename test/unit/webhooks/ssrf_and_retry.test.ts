import { test } from 'node:test'
import assert from 'node:assert/strict'
import { checkedAddress, SsrfBlockedError } from '../../../webhooks/ssrf.ts'
import { retryDelayMs, maxAttempts, RETRY_JITTER } from '../../../webhooks/retry.ts'
import { subscribes } from '../../../webhooks/fanout.ts'
import { deliverable, held } from '../../../webhooks/dispatcher.ts'
import type { WebhookJob } from '../../../stores/webhooks/mod.ts'
import { isBlockedAddress, type WebhookRecord } from '../../../protocol/mod.ts'

test('non-public addresses are refused, public ones pass', () => {
  const blocked = [
    '127.0.0.1', '127.8.9.10', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1',
    '100.127.255.254', '169.254.169.254', '0.0.0.0', '224.0.0.1', '239.255.255.250', '255.255.255.255',
    '::', '::1', 'fe80::1', 'febf::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1',
    '::ffff:10.1.2.3', '::ffff:169.254.169.254', '::127.0.0.1', '64:ff9b::a00:1', '0:0:0:0:0:0:0:1', 'fe80::1%eth0', 'not-an-ip',
    '192.0.2.1', '198.51.100.7', '203.0.113.254', '::ffff:203.0.113.9'
  ]
  const allowed = ['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '192.169.0.1', '192.0.3.1',
    '198.51.101.1', '203.0.114.1',
    '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808']
  for (const ip of blocked) assert.equal(isBlockedAddress(ip), true, ip)
  for (const ip of allowed) assert.equal(isBlockedAddress(ip), false, ip)
})

test('a name is refused when any of its addresses is refused, unless private targets are allowed', async () => {
  const resolve = async (host: string): Promise<Array<{ address: string, family: 4 | 6 }>> =>
    host === 'mixed.test' ? [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.5', family: 4 }] : [{ address: '93.184.216.34', family: 4 }]
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

test('a job is dropped for a deleted or failed webhook and for events fanned out before the last failure; one owed to a paused webhook waits', () => {
  const wh: WebhookRecord = { id: 'wh_1', org_id: 'org_1', url: 'https://x.test/', events: ['delivered'], secret: 's', status: 'active', created_at: '', updated_at: '' }
  const job: WebhookJob = { event: { id: 'evt_1', type: 'delivered', timestamp: '', data: {} }, org_id: 'org_1', webhook_id: 'wh_1', attempt: 1, due_at: 0, created_at: Date.parse('2026-01-01T00:00:00Z') }
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
