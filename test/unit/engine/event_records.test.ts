import { test } from 'node:test'
import assert from 'node:assert/strict'
import { EventFactory } from '../../../engine/events_out.ts'
import { eventId, eventRecord } from '../../../protocol/events.ts'
import type { QueuedMessage } from '../../../protocol/mod.ts'

// Stored JSON as earlier versions published it: ids are how OB_EVENTS and receivers drop a re-published event,
// so neither an id nor the envelope's bytes (id, type, timestamp, data) may change. The record's routing fields after
// `data` (`environment` for sandbox events, `domain`, the sending domain, for webhook filters) are never sent.
const MSG = { id: 'msg_01', org_id: 'org_1', from: 'Sender <s@example.com>', metadata: { order: '42' } } as unknown as QueuedMessage
const AT = '2026-11-25T02:00:00.000Z'

test('a delivery event carries the message fields around its own, with an id per recipient, type and attempt', () => {
  const events = new EventFactory(MSG, 'Your order')
  assert.equal(JSON.stringify(events.make('delivered', 'a@example.com', AT, { delivered_at: AT, smtp_response: '250 OK' })),
    '{"id":"evt_6vsxrtrvcq7ypz4jhqnhvdenkb","type":"delivered","timestamp":"2026-11-25T02:00:00.000Z","org_id":"org_1",' +
    '"message_id":"msg_01","data":{"message_id":"msg_01","from":"Sender <s@example.com>","to":"a@example.com",' +
    '"subject":"Your order","delivered_at":"2026-11-25T02:00:00.000Z","smtp_response":"250 OK","metadata":{"order":"42"}},' +
    '"domain":"example.com"}')
  const deferred = { deferred_at: AT, smtp_response: '451 try later', attempt: 2, next_attempt_at: '2026-11-25T02:05:00.000Z' }
  assert.equal(JSON.stringify(events.make('deferred', 'a@example.com', AT, deferred, 2)),
    '{"id":"evt_hjex7sx3s2c7mrc2b1wrpb4g1h","type":"deferred","timestamp":"2026-11-25T02:00:00.000Z","org_id":"org_1",' +
    '"message_id":"msg_01","data":{"message_id":"msg_01","from":"Sender <s@example.com>","to":"a@example.com",' +
    '"subject":"Your order","deferred_at":"2026-11-25T02:00:00.000Z","smtp_response":"451 try later","attempt":2,' +
    '"next_attempt_at":"2026-11-25T02:05:00.000Z","metadata":{"order":"42"}},"domain":"example.com"}')
  const delivered = { delivered_at: AT, smtp_response: '250 OK' }
  assert.equal(events.make('delivered', 'a@example.com', AT, delivered).id, eventId('msg_01', 'a@example.com', 'delivered', 0))
  assert.notEqual(events.make('delivered', 'b@example.com', AT, delivered).id, events.make('delivered', 'a@example.com', AT, delivered).id)
})

test('a message without metadata has none in its events', () => {
  const e = new EventFactory({ ...MSG, metadata: undefined } as unknown as QueuedMessage, 'Hi')
    .make('failed', 'a@example.com', AT, { failed_at: AT, failure_category: 'unbuildable', reason: 'x' })
  assert.equal(JSON.stringify(e.data), '{"message_id":"msg_01","from":"Sender <s@example.com>","to":"a@example.com","subject":"Hi",' +
    '"failed_at":"2026-11-25T02:00:00.000Z","failure_category":"unbuildable","reason":"x"}')
})

test('a tagged message\'s events carry its tags after the metadata; an untagged one\'s have no tags field', () => {
  const e = new EventFactory({ ...MSG, tags: ['welcome', 'b_2'] } as unknown as QueuedMessage, 'Hi')
    .make('failed', 'a@example.com', AT, { failed_at: AT, failure_category: 'unbuildable', reason: 'x' })
  assert.equal(JSON.stringify(e.data), '{"message_id":"msg_01","from":"Sender <s@example.com>","to":"a@example.com","subject":"Hi",' +
    '"failed_at":"2026-11-25T02:00:00.000Z","failure_category":"unbuildable","reason":"x","metadata":{"order":"42"},' +
    '"tags":["welcome","b_2"]}')
  const untagged = new EventFactory({ ...MSG, tags: [] } as unknown as QueuedMessage, 'Hi')
    .make('failed', 'a@example.com', AT, { failed_at: AT, failure_category: 'unbuildable', reason: 'x' })
  assert.equal(Object.hasOwn(untagged.data, 'tags'), false)
})

test('a message queued on a stream has it last in its events; one queued before streams has no stream field', () => {
  const e = new EventFactory({ ...MSG, tags: ['a'], stream: 'news' } as unknown as QueuedMessage, 'Hi')
    .make('failed', 'a@example.com', AT, { failed_at: AT, failure_category: 'unbuildable', reason: 'x' })
  assert.equal(JSON.stringify(e.data), '{"message_id":"msg_01","from":"Sender <s@example.com>","to":"a@example.com","subject":"Hi",' +
    '"failed_at":"2026-11-25T02:00:00.000Z","failure_category":"unbuildable","reason":"x","metadata":{"order":"42"},' +
    '"tags":["a"],"stream":"news"}')
  const old = new EventFactory(MSG, 'Hi')
    .make('failed', 'a@example.com', AT, { failed_at: AT, failure_category: 'unbuildable', reason: 'x' })
  assert.equal(Object.hasOwn(old.data, 'stream'), false)
})

test('an event of a message has its id, its time (now unless given) and its message id before the data', () => {
  const before = Date.now()
  const e = eventRecord(eventId('unsubscribed', 'org_1', 'msg_01', 'a@example.com'), 'unsubscribed', 'org_1',
    { message_id: 'msg_01', to: 'a@example.com', unsubscribed_at: AT, method: 'link' }, 'msg_01')
  assert.ok(Date.parse(e.timestamp) >= before && Date.parse(e.timestamp) <= Date.now())
  assert.equal(JSON.stringify({ ...e, timestamp: AT }),
    '{"id":"evt_epw82e7wgwgj1pqbn9arkr0sgy","type":"unsubscribed","timestamp":"2026-11-25T02:00:00.000Z","org_id":"org_1",' +
    '"message_id":"msg_01","data":{"message_id":"msg_01","to":"a@example.com","unsubscribed_at":"2026-11-25T02:00:00.000Z",' +
    '"method":"link"}}')
  const opened = { message_id: 'msg_01', to: 'a@example.com', opened_at: AT, user_agent: 'UA', ip_address: '192.0.2.1' }
  assert.equal(JSON.stringify(eventRecord('evt_x', 'opened', 'org_1', opened, 'msg_01', AT)),
    '{"id":"evt_x","type":"opened","timestamp":"2026-11-25T02:00:00.000Z","org_id":"org_1","message_id":"msg_01",' +
    '"data":{"message_id":"msg_01","to":"a@example.com","opened_at":"2026-11-25T02:00:00.000Z","user_agent":"UA",' +
    '"ip_address":"192.0.2.1"}}')
})

test('an event of no message (inbound mail) has no message_id field', () => {
  const data = {
    message_id: 'job_1', route_id: 'rt_1', from: 'x@example.com', to: ['in@example.org'], subject: 'S', text: 'T', html: '', headers: {},
    attachments: [], received_at: AT
  }
  const e = eventRecord(eventId('inbound.received', 'job_1', 'rt_1'), 'inbound.received', 'org_1', data, undefined, AT)
  assert.equal(JSON.stringify(e), '{"id":"evt_3p4q35ss1np6s8t4dt87zg611t","type":"inbound.received",' +
    '"timestamp":"2026-11-25T02:00:00.000Z","org_id":"org_1","data":' + JSON.stringify(data) + '}')
  assert.equal(Object.hasOwn(e, 'message_id'), false)
})
