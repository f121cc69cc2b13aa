import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import {
  defaultReturnPathHost, encodeVerp, decodeVerp, verpIssuedTo, verpMac, verpRecipient, type VerpKey
} from '../../../protocol/verp.ts'

const MSG = 'msg_01jd5k3v7q8r9s0t1u2v3w4x5y'
const KEY: VerpKey = { id: 'k7p2', secret: Buffer.alloc(32, 7) }
const OTHER: VerpKey = { id: 'x9q3', secret: Buffer.alloc(32, 9) }

test('encode gives the documented form, within the 64 characters of a local part, and decode inverts it', () => {
  const addr = encodeVerp(MSG, 'Alice@Example.org', defaultReturnPathHost('Sender.com'), KEY)
  assert.match(addr, /^bounces\+msg_[0-9a-z]{26}-k7p2[0-9a-z]{16}@bounces\.sender\.com$/)
  assert.ok(addr.indexOf('@') <= 64, `local part ${addr.indexOf('@')} characters`)
  assert.deepEqual(decodeVerp(addr),
    { messageId: MSG, keyId: 'k7p2', mac: verpMac(KEY.secret, MSG, 'alice@example.org'), host: 'bounces.sender.com', domain: 'sender.com' })
})

test('the tag is HMAC-SHA256 of message id and lower-cased recipient, 10 bytes in Crockford base32', () => {
  const mac = createHmac('sha256', KEY.secret).update(`${MSG}\nbob@x.org`).digest().subarray(0, 10)
  let bits = ''
  for (const b of mac) bits += b.toString(2).padStart(8, '0')
  const expected = bits.match(/.{5}/g)!.map((b) => '0123456789abcdefghjkmnpqrstvwxyz'[parseInt(b, 2)]).join('')
  assert.equal(verpMac(KEY.secret, MSG, ' BOB@x.org '), expected)
})

test('a tag verifies for its recipient only, and only under its key', () => {
  const d = decodeVerp(encodeVerp(MSG, 'two@x.org', 'd.io', KEY))!
  assert.equal(verpIssuedTo(d, KEY, 'TWO@x.org'), true)
  assert.equal(verpIssuedTo(d, KEY, 'one@x.org'), false)
  assert.equal(verpIssuedTo(d, OTHER, 'two@x.org'), false)
  assert.equal(verpRecipient(d, KEY, ['one@x.org', 'two@x.org', 'three@x.org']), 'two@x.org')
  assert.equal(verpRecipient(d, KEY, ['one@x.org']), undefined)
  // The same tag on another message id names nobody.
  const moved = decodeVerp(encodeVerp(MSG, 'two@x.org', 'd.io', KEY).replace(MSG, 'msg_01jd5k3v7q8r9s0t1u2v3w4x5z'))!
  assert.equal(verpRecipient(moved, KEY, ['two@x.org']), undefined)
})

test('an address at a domain\'s own return-path host decodes with its host and no default domain', () => {
  const addr = encodeVerp(MSG, 'a@b.co', 'RP.Sender.com', KEY)
  assert.match(addr, /@rp\.sender\.com$/)
  assert.deepEqual(decodeVerp(addr),
    { messageId: MSG, keyId: 'k7p2', mac: verpMac(KEY.secret, MSG, 'a@b.co'), host: 'rp.sender.com' })
})

test('decode accepts angle brackets and upper case', () => {
  const addr = encodeVerp(MSG, 'a@b.co', 'd.io', KEY)
  assert.equal(decodeVerp(`<${addr.toUpperCase()}>`)?.messageId, MSG)
})

test('decode refuses addresses that are not VERP, including the old unkeyed form', () => {
  const tag = 'k7p20123456789abcdef'
  for (const a of ['bounces@bounces.d.io', `bounces+${MSG}@bounces.d.io`, `bounces+${MSG}-${tag}@bounces.`,
    `bounces+${MSG}-${tag}@localhost`, 'nobody', `x+${MSG}-${tag}@bounces.d.io`, `bounces+${MSG}-0123456789ab@bounces.d.io`,
    `bounces+${MSG}-k7p20123456789abcdeu@bounces.d.io`, `bounces+${MSG}-${tag}0@bounces.d.io`,
    `bounces+msg_short-${tag}@bounces.d.io`, '']) {
    assert.equal(decodeVerp(a), undefined, a)
  }
})
