import { test } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { SendRequest, addressDomain, bareAddress } from '../../../protocol/mod.ts'
import { compileValidator } from '../../../gateway/http/validate.ts'
import { checkIdempotencyKey, fingerprint } from '../../../gateway/idempotency/mod.ts'

const validator = compileValidator(SendRequest)
const base = { from: 'me@acme.example', to: 'you@example.net', subject: 'Hi', html: '<p>Hi</p>' }
const fieldsOf = (value: unknown): string[] => (validator.check(value) ?? []).map((e) => e.field)

test('addresses: plain, named and quoted forms pass; forms that split into two addresses do not', () => {
  for (const from of ['me@acme.example', 'Me <me@acme.example>', '"Acme, Inc." <me@acme.example>', 'Ann O\'Neil <ann@acme.example>']) {
    assert.equal(validator.check({ ...base, from }), null, from)
  }
  for (const from of ['evil@other.example, <me@acme.example>', 'x@y.example <me@acme.example>', 'a; b <me@acme.example>', 'me@acme',
    '<me@acme.example', 'me@@acme.example']) {
    assert.deepEqual(fieldsOf({ ...base, from }), ['from'], from)
  }
})

test('no CR, LF or NUL passes any header-bound field, wherever it sits in the value', () => {
  const fields = fc.constantFrom('from', 'to', 'subject', 'reply_to')
  fc.assert(fc.property(fc.constantFrom('\r', '\n', '\0'), fc.nat(20), fields, (bad, at, field) => {
    const clean = field === 'subject' ? 'A subject line here' : 'Name Here <me@acme.example>'
    const pos = Math.min(at, clean.length)
    const value = clean.slice(0, pos) + bad + clean.slice(pos)
    return fieldsOf({ ...base, [field]: value }).includes(field)
  }))
})

test('pattern failures read as sentences, not regular expressions', () => {
  const errors = validator.check({ ...base, to: ['ok@example.net', 'bad\n@example.net'], subject: 'a\nb' })!
  assert.deepEqual(errors.map((e) => e.field).sort(), ['subject', 'to[1]'])
  for (const e of errors) assert.doesNotMatch(e.message, /\^|\$\)/)
})

test('bareAddress and addressDomain take the address out of a display form, lower-cased', () => {
  assert.equal(bareAddress('"Acme <x>" <Me@Acme.Example>'), 'me@acme.example')
  assert.equal(addressDomain('Me <me@ACME.example>'), 'acme.example')
})

test('Idempotency-Key: up to 255 characters without control characters', () => {
  assert.equal(checkIdempotencyKey('k'.repeat(255)), 'k'.repeat(255))
  assert.throws(() => checkIdempotencyKey('k'.repeat(256)), { code: 'validation_error' })
  assert.throws(() => checkIdempotencyKey('a\u0001b'), { code: 'validation_error' })
  assert.throws(() => checkIdempotencyKey('a\u007fb'), { code: 'validation_error' })
})

test('the fingerprint covers the path and every byte of the body', () => {
  const body = Buffer.from('{"a":1}')
  assert.equal(fingerprint('/v1/messages/send', body), fingerprint('/v1/messages/send', Buffer.from('{"a":1}')))
  assert.notEqual(fingerprint('/v1/messages/send', body), fingerprint('/v1/messages/batch', body))
  assert.notEqual(fingerprint('/v1/messages/send', body), fingerprint('/v1/messages/send', Buffer.from('{"a": 1}')))
})
