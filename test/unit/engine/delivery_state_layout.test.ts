import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DeliveryStateChanges, deliveryStateKey, freshRecipientState, parseDeliveryState } from '../../../engine/delivery_state_layout.ts'
import type { EventRecord } from '../../../protocol/events.ts'
import type { RecipientResult } from '../../../engine/actor/task.ts'

const SENT: RecipientResult = {
  rcpt: 'a@example.com', at: '2026-11-25T02:00:00.000Z', outcome: { kind: 'delivered', response: '250 2.0.0 OK' }
}
const FINAL: EventRecord[] = [{
  id: 'evt_0123456789abcdefghjkmnpqrs',
  type: 'delivered',
  timestamp: '2026-11-25T02:00:00.000Z',
  org_id: 'org_1',
  message_id: 'msg_1',
  data: {
    message_id: 'msg_1', from: 'f@example.com', to: 'a@example.com', subject: 'Hi',
    delivered_at: '2026-11-25T02:00:00.000Z', smtp_response: '250 2.0.0 OK', metadata: {}
  }
}]

test('a recipient state written as changes reads back the same', () => {
  const fields = {
    ...new DeliveryStateChanges().sent(SENT).fields(),
    ...new DeliveryStateChanges().deferred('a@example.com', 2, 1_764_036_000_000).final('a@example.com', FINAL).fields(),
    ...new DeliveryStateChanges().published('a@example.com').fields()
  }
  const state = parseDeliveryState(fields)
  assert.deepEqual([...state.keys()], ['a@example.com'])
  assert.deepEqual(state.get('a@example.com'), { sent: SENT, final: FINAL, published: true, attempts: 2, notBefore: 1_764_036_000_000 })
})

test('the hash layout is the one redeliveries of earlier versions read', () => {
  assert.equal(deliveryStateKey('msg_1'), 'ob:done:msg_1')
  assert.deepEqual(new DeliveryStateChanges()
    .sent(SENT)
    .final('a@example.com', FINAL)
    .published('a@example.com')
    .deferred('b@example.com', 1, 1000)
    .notBefore('c@example.com', 2000)
    .fields(), {
    's:a@example.com': JSON.stringify(SENT),
    'd:a@example.com': JSON.stringify(FINAL),
    'p:a@example.com': '1',
    'a:b@example.com': '1',
    'n:b@example.com': '1000',
    'n:c@example.com': '2000'
  })
})

test('recipients are kept apart, and one with only a wait has no attempts', () => {
  const state = parseDeliveryState(new DeliveryStateChanges().deferred('a@example.com', 1, 1000).notBefore('b@example.com', 2000).fields())
  assert.deepEqual(state.get('a@example.com'), { published: false, attempts: 1, notBefore: 1000 })
  assert.deepEqual(state.get('b@example.com'), { ...freshRecipientState(), notBefore: 2000 })
  assert.equal(state.get('c@example.com'), undefined)
})

test('no changes are empty; a later change of the same field replaces the earlier one', () => {
  assert.equal(new DeliveryStateChanges().empty, true)
  const c = new DeliveryStateChanges().notBefore('a@example.com', 1000).notBefore('a@example.com', 3000)
  assert.equal(c.empty, false)
  assert.deepEqual(c.fields(), { 'n:a@example.com': '3000' })
})

test('fields of an unknown kind are ignored', () => {
  assert.equal(parseDeliveryState({ 'x:a@example.com': '1' }).size, 0)
})

test('the provider an attempt found reads back; an engine that does not know the field ignores it', () => {
  const fields = new DeliveryStateChanges().notBefore('a@example.com', 1000).provider('a@example.com', 'google').fields()
  assert.deepEqual(fields, { 'n:a@example.com': '1000', 'v:a@example.com': 'google' })
  assert.deepEqual(parseDeliveryState(fields).get('a@example.com'), { ...freshRecipientState(), notBefore: 1000, provider: 'google' })
})
