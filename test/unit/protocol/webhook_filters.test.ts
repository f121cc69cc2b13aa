import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  eventAttributes, eventRecord, matchesFilters, normalizedFilters, webhookEnvelopeOf, type EventAttributes
} from '../../../protocol/mod.ts'

const live = (more: Partial<EventAttributes> = {}): EventAttributes => ({ environment: 'live', ...more })

test('no filters pass every event; each kind given must match, any value within it', () => {
  assert.equal(matchesFilters(undefined, live()), true)
  assert.equal(matchesFilters({}, live()), true)
  const f = { tags: ['a', 'b'], domains: ['example.com'], environment: 'test' as const }
  assert.equal(matchesFilters(f, { environment: 'test', domain: 'example.com', tags: ['z', 'b'] }), true)
  assert.equal(matchesFilters(f, { environment: 'live', domain: 'example.com', tags: ['a'] }), false, 'environment')
  assert.equal(matchesFilters(f, { environment: 'test', domain: 'other.com', tags: ['a'] }), false, 'domain')
  assert.equal(matchesFilters(f, { environment: 'test', domain: 'example.com', tags: ['c'] }), false, 'tags')
})

test('events without the attribute do not match a filter on it', () => {
  assert.equal(matchesFilters({ tags: ['a'] }, live({ domain: 'example.com' })), false, 'no tags')
  assert.equal(matchesFilters({ domains: ['example.com'] }, live({ tags: ['a'] })), false, 'no sending domain')
  assert.equal(matchesFilters({ environment: 'live' }, live()), true)
})

test('filters are stored once each, domains in lower case, environment all as no filter', () => {
  assert.deepEqual(normalizedFilters({ tags: ['a', 'a'], domains: ['Example.COM', 'example.com'], environment: 'all' }),
    { tags: ['a'], domains: ['example.com'] })
  assert.equal(normalizedFilters({ environment: 'all' }), undefined)
  assert.equal(normalizedFilters(undefined), undefined)
  // A stored filter with upper case still matches (the Sets are made lower case).
  assert.equal(matchesFilters({ domains: ['Example.com'] }, live({ domain: 'example.com' })), true)
})

test('the webhook envelope says its environment after timestamp; the record keeps it only for sandbox events', () => {
  const data = { message_id: 'msg_1', to: 'a@example.net', delivered_at: 't', smtp_response: '250' }
  const liveRecord = eventRecord('evt_1', 'delivered', 'org_1', data, 'msg_1', '2026-01-01T00:00:00.000Z', 'live', 'Example.com')
  assert.equal(liveRecord.environment, undefined)
  assert.equal(liveRecord.domain, 'example.com')
  assert.deepEqual(Object.keys(webhookEnvelopeOf(liveRecord)), ['id', 'type', 'timestamp', 'environment', 'data'])
  assert.equal(webhookEnvelopeOf(liveRecord).environment, 'live')
  const sandbox = eventRecord('evt_2', 'delivered', 'org_1', data, 'msg_1', '2026-01-01T00:00:00.000Z', 'test')
  assert.equal(webhookEnvelopeOf(sandbox).environment, 'test')
  assert.equal('domain' in sandbox, false)
})

test('an event\'s sending domain: its record\'s, else a health event\'s own domain, else its from address\'s; inbound has none', () => {
  assert.equal(eventAttributes('opened', { tags: ['a'] }, 'live', 'example.com').domain, 'example.com')
  assert.equal(eventAttributes('domain.health_changed', { domain: 'Mail.Example.com' }, 'live').domain, 'mail.example.com')
  assert.equal(eventAttributes('delivered', { from: 'App <app@Example.org>' }, 'test').domain, 'example.org')
  assert.equal(eventAttributes('inbound.received', { from: 'someone@elsewhere.net' }, 'live').domain, undefined)
  assert.deepEqual(eventAttributes('opened', { tags: ['a'] }, 'live').tags, ['a'])
  assert.equal(eventAttributes('opened', {}, 'live').tags, undefined)
})

test('stream events have no tags and no domain: an environment or a streams filter may pass them, a tags or domains one never', () => {
  const a = eventAttributes('stream.paused', { stream: 'transactional', reason: 'bounce_rate' }, 'live')
  assert.deepEqual(a, { environment: 'live', stream: 'transactional' })
  assert.equal(matchesFilters({ environment: 'live' }, a), true)
  assert.equal(matchesFilters({ streams: ['transactional'] }, a), true)
  assert.equal(matchesFilters({ streams: ['news'] }, a), false)
  assert.equal(matchesFilters({ tags: ['a'] }, a), false)
  assert.equal(matchesFilters({ domains: ['example.com'] }, a), false)
})

test('a stream filter passes events of its streams; events of messages sent before streams are transactional', () => {
  assert.equal(eventAttributes('delivered', { message_id: 'msg_1', stream: 'news' }, 'live').stream, 'news')
  assert.equal(eventAttributes('delivered', { message_id: 'msg_1' }, 'live').stream, 'transactional')
  assert.equal(eventAttributes('inbound.received', { message_id: 'msg_1' }, 'live').stream, undefined)
  assert.equal(eventAttributes('domain.health_changed', { domain: 'example.com' }, 'live').stream, undefined)
  assert.equal(matchesFilters({ streams: ['news'] }, live({ stream: 'news' })), true)
  assert.equal(matchesFilters({ streams: ['news'] }, live({ stream: 'transactional' })), false)
  assert.equal(matchesFilters({ streams: ['news'] }, live()), false, 'an event of no message')
  assert.deepEqual(normalizedFilters({ streams: ['news', 'news'] }), { streams: ['news'] })
})
