import { test } from 'node:test'
import assert from 'node:assert/strict'
import { deliveredCount, messageStatusOf, recipientStatusAfter } from '../../../protocol/mod.ts'
import { MESSAGE_STATUS_CASES } from './message_status_cases.ts'

for (const c of MESSAGE_STATUS_CASES) {
  test(`message status: ${c.name} -> ${c.status ?? 'unknown'}`, () => {
    assert.equal(messageStatusOf(c.input), c.status)
  })
}

test('complained recipients count as delivered', () => {
  assert.equal(deliveredCount({ complained: 1 }), 1)
  assert.equal(deliveredCount({ delivered: 2, complained: 1, bounced: 3 }), 3)
  assert.equal(deliveredCount({}), 0)
})

test('an open or a click marks its recipient delivered; an unsubscribe changes nothing', () => {
  assert.equal(recipientStatusAfter('opened'), 'delivered')
  assert.equal(recipientStatusAfter('clicked'), 'delivered')
  assert.equal(recipientStatusAfter('complained'), 'complained')
  assert.equal(recipientStatusAfter('deferred'), 'deferred')
  assert.equal(recipientStatusAfter('unsubscribed'), undefined)
})
