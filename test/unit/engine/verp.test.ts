import { test } from 'node:test'
import assert from 'node:assert/strict'
import { encodeVerp, decodeVerp, verpRecipient, verpRecipientHash } from '../../../engine/protocol/verp.ts'

const MSG = 'msg_01jd5k3v7q8r9s0t1u2v3w4x5y'

test('encode gives the documented form and decode inverts it', () => {
  const addr = encodeVerp(MSG, 'Alice@Example.org', 'Sender.com')
  assert.match(addr, /^bounces\+msg_[0-9a-z]{26}-[0-9a-f]{12}@bounces\.sender\.com$/)
  const d = decodeVerp(addr)
  assert.deepEqual(d, { messageId: MSG, rcptHash: verpRecipientHash('alice@example.org'), domain: 'sender.com' })
})

test('the recipient hash ignores case and surrounding space', () => {
  assert.equal(verpRecipientHash(' BOB@x.org '), verpRecipientHash('bob@x.org'))
  assert.notEqual(verpRecipientHash('bob@x.org'), verpRecipientHash('bob2@x.org'))
})

test('decode accepts angle brackets and upper case', () => {
  const addr = encodeVerp(MSG, 'a@b.co', 'd.io')
  assert.equal(decodeVerp(`<${addr.toUpperCase()}>`)?.messageId, MSG)
})

test('decode refuses addresses that are not VERP', () => {
  for (const a of ['bounces@bounces.d.io', `bounces+${MSG}@bounces.d.io`, `bounces+${MSG}-0123456789ab@d.io`,
    `bounces+${MSG}-0123456789ab@bounces.`, 'nobody', `x+${MSG}-0123456789ab@bounces.d.io`, `bounces+${MSG}-0123456789AZ@bounces.d.io`]) {
    assert.equal(decodeVerp(a), undefined, a)
  }
})

test('verpRecipient finds the recipient among the message recipients', () => {
  const d = decodeVerp(encodeVerp(MSG, 'two@x.org', 'd.io'))!
  assert.equal(verpRecipient(d, ['one@x.org', 'Two@X.org', 'three@x.org']), 'Two@X.org')
  assert.equal(verpRecipient(d, ['one@x.org']), undefined)
})
