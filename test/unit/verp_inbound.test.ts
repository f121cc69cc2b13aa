import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { encodeVerp, decodeVerp, verpMatches, newId } from '../../engine/protocol/mod.ts'

test('encode follows bounces+<msg_id>-<12 hex of sha256(lower(rcpt))>@bounces.<domain>', () => {
  const id = newId('msg')
  const hash = createHash('sha256').update('bob@example.org').digest('hex').slice(0, 12)
  assert.equal(encodeVerp(id, 'Bob@Example.org', 'Mail.Acme.test'), `bounces+${id}-${hash}@bounces.mail.acme.test`)
})

test('decode round-trips, case-insensitively, and matches only the original recipient', () => {
  const id = newId('msg')
  const v = decodeVerp(encodeVerp(id, 'bob@example.org', 'acme.test').toUpperCase())
  assert.ok(v !== undefined)
  assert.equal(v.messageId, id)
  assert.equal(v.domain, 'acme.test')
  assert.equal(verpMatches(v, 'BOB@example.org'), true)
  assert.equal(verpMatches(v, 'alice@example.org'), false)
})

test('anything else is not a VERP address', () => {
  const id = newId('msg')
  for (const a of [
    'bob@acme.test', `bounces+${id}-0123456789@acme.test`, `bounces+${id}-012345678@bounces.acme.test`,
    `bounces+${id}-0123456789x@bounces.acme.test`, 'bounces+msg_short-0123456789@bounces.acme.test', `bounces+${id}-0123456789@bounces.`, ''
  ]) assert.equal(decodeVerp(a), undefined, a)
})
