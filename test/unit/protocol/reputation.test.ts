import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  STREAM_PAUSE_KEYS, eventStream, pauseReason, percent, reputationRates, streamOf, type ReputationThresholds
} from '../../../protocol/mod.ts'
import { reputationField } from '../../../stores/reputation/mod.ts'
import type { EventRecord } from '../../../protocol/mod.ts'

const DEFAULTS: ReputationThresholds = { complaintRate: 0.003, bounceRate: 0.05, minVolume: 1000, windowHours: 24 }
const counts = (delivered: number, hardBounced: number, complained: number) => ({ delivered, hard_bounced: hardBounced, complained })

test('volume is delivered plus hard bounced; both rates are over the volume', () => {
  assert.deepEqual(reputationRates(counts(950, 50, 3)), { volume: 1000, bounce_rate: 0.05, complaint_rate: 0.003 })
  assert.deepEqual(reputationRates(counts(0, 0, 0)), { volume: 0, bounce_rate: 0, complaint_rate: 0 })
})

test('a rate at its threshold trips, one just below does not', () => {
  assert.equal(pauseReason(counts(1000, 0, 3), DEFAULTS), 'complaint_rate', '3 in 1000 is 0.3 %')
  assert.equal(pauseReason(counts(1000, 0, 2), DEFAULTS), undefined, '0.2 %')
  // thresholds come from percentages (0.3 / 100): a rate equal to one on paper must trip whatever the rounding
  assert.equal(pauseReason(counts(1000, 0, 9), { ...DEFAULTS, complaintRate: 0.9 / 100 }), 'complaint_rate',
    '9 / 1000 < 0.9 / 100 in floats')
  assert.equal(pauseReason(counts(950, 50, 0), DEFAULTS), 'bounce_rate', '5 %')
  assert.equal(pauseReason(counts(951, 49, 0), DEFAULTS), undefined, '4.9 %')
})

test('below the minimum volume nothing trips, however high the rates', () => {
  assert.equal(pauseReason(counts(0, 999, 999), DEFAULTS), undefined)
  assert.equal(pauseReason(counts(1, 999, 0), DEFAULTS), 'bounce_rate', 'at the minimum it applies')
})

test('complaints are checked before bounces', () => {
  assert.equal(pauseReason(counts(900, 100, 10), DEFAULTS), 'complaint_rate')
})

test('the stream is the default one unless named', () => {
  assert.equal(streamOf({}), 'transactional')
  assert.equal(streamOf(undefined), 'transactional')
  assert.equal(streamOf({ stream: '' }), 'transactional')
  assert.equal(streamOf({ stream: 'marketing' }), 'marketing')
  assert.equal(eventStream({ data: { stream: 'news' } }), 'news')
  assert.equal(eventStream({ stream: 'news', data: {} }), 'news')
  assert.equal(eventStream({ data: {} }), 'transactional')
})

test('live delivered, hard-bounced and complained events count; sandbox, soft and operator bounces do not', () => {
  const e = (type: EventRecord['type'], data: Record<string, unknown> = {}, environment?: 'test'): EventRecord =>
    ({ id: 'evt_1', type, timestamp: '', org_id: 'org_1', data, ...(environment !== undefined ? { environment } : {}) })
  assert.equal(reputationField(e('delivered')), 'delivered')
  assert.equal(reputationField(e('complained')), 'complained')
  assert.equal(reputationField(e('bounced', { bounce_type: 'hard', bounce_category: 'mailbox' })), 'hard_bounced')
  assert.equal(reputationField(e('bounced', { bounce_type: 'soft', bounce_category: 'mailbox_full' })), undefined)
  assert.equal(reputationField(e('bounced', { bounce_type: 'hard', bounce_category: 'operator' })), undefined)
  assert.equal(reputationField(e('delivered', {}, 'test')), undefined)
  assert.equal(reputationField(e('opened')), undefined)
})

test('percent shows two decimals at most', () => {
  assert.equal(percent(0.003), '0.3 %')
  assert.equal(percent(0.12345), '12.35 %')
})

test('a pause key holds a stream name of the API\'s shape as it is, any other name as a marked digest', () => {
  assert.equal(STREAM_PAUSE_KEYS.pause('org_1', 'transactional'), 'pause.org_1.transactional')
  assert.match(STREAM_PAUSE_KEYS.pause('org_1', 'News Letter'), /^pause\.org_1\.=[0-9a-f]{40}$/)
  assert.ok(STREAM_PAUSE_KEYS.pause('org_1', 'x').startsWith(STREAM_PAUSE_KEYS.orgPrefix('org_1')))
})
