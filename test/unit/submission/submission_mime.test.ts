import { test } from 'node:test'
import assert from 'node:assert/strict'
import { normaliseLineEnds, readSubmitted } from '../../../gateway/submission/mime.ts'
import { SmtpReply } from '../../../stores/smtp_server/mod.ts'

const ids = { messageId: '<msg_x@acme.test>', date: new Date('2026-11-25T05:00:00Z') }
const reply = (code: number, enhanced: string) => (err: unknown) =>
  err instanceof SmtpReply && err.responseCode === code && err.message.startsWith(enhanced)

test('bare LF becomes CRLF and nothing else changes; CRLF input is returned as it is', () => {
  assert.equal(normaliseLineEnds(Buffer.from('a\nb\r\nc\n')).toString(), 'a\r\nb\r\nc\r\n')
  const crlf = Buffer.from('a\r\nb\r\n')
  assert.equal(normaliseLineEnds(crlf), crlf)
  assert.throws(() => normaliseLineEnds(Buffer.from('a\rb\r\n')), reply(554, '5.6.0'))
  assert.throws(() => normaliseLineEnds(Buffer.from('a\0b')), reply(554, '5.6.0'))
  assert.throws(() => normaliseLineEnds(Buffer.from('x'.repeat(999))), reply(554, '5.6.0'))
  assert.equal(normaliseLineEnds(Buffer.from('x'.repeat(998) + '\r\n')).length, 1000)
})

test('metadata (RFC 2047 encoded or not) and tags are read and removed; other headers stay byte for byte', () => {
  const encoded = `=?UTF-8?B?${Buffer.from('{"user":"ü1"}').toString('base64')}?=`
  const head = 'From: "App" <app@acme.test>\r\nTo: a@x.test,\r\n  B <b@x.test>\r\nCc: c@x.test\r\n' +
    'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=\r\n' +
    `X-Outbox-Metadata: ${encoded}\r\nX-Outbox-Tags: welcome, on_boarding\r\nList-Unsubscribe: <https://app.test/u>\r\nX-Custom:   kept  as is\r\n` +
    'Message-ID: <given@app.test>\r\nDate: Wed, 25 Nov 2026 05:00:00 +0000\r\n'
  const m = readSubmitted(Buffer.from(head + '\r\nbody\r\n'), ids)
  assert.deepEqual(m.metadata, { user: 'ü1' })
  assert.deepEqual(m.tags, ['welcome', 'on_boarding'])
  assert.equal(m.subject, 'Grüße')
  assert.equal(m.fromAddress, 'app@acme.test')
  assert.deepEqual([...m.to], ['a@x.test', 'b@x.test'])
  assert.deepEqual([...m.cc], ['c@x.test'])
  assert.equal(m.messageId, '<given@app.test>')
  const out = m.mime.toString()
  assert.doesNotMatch(out, /X-Outbox-|List-Unsubscribe/)
  assert.ok(out.includes('To: a@x.test,\r\n  B <b@x.test>\r\n'))
  assert.ok(out.includes('X-Custom:   kept  as is\r\n'))
  assert.ok(out.endsWith('\r\n\r\nbody\r\n'))
  assert.doesNotMatch(out, /msg_x/)
})

test('Message-ID and Date are added when missing; a message without changes is returned as it is', () => {
  const bare = readSubmitted(Buffer.from('From: app@acme.test\r\n\r\nbody\r\n'), ids)
  assert.match(bare.mime.toString(), /^Message-ID: <msg_x@acme\.test>$/m)
  assert.match(bare.mime.toString(), /^Date: Wed, 25 Nov 2026 05:00:00 \+0000$/m)
  assert.equal(bare.messageId, undefined)
  const whole = Buffer.from('From: app@acme.test\r\nMessage-ID: <a@b>\r\nDate: Wed, 25 Nov 2026 05:00:00 +0000\r\n\r\nbody\r\n')
  assert.equal(readSubmitted(whole, ids).mime, whole)
})

test('From: missing, doubled, a list, or a display name showing another address is refused', () => {
  assert.throws(() => readSubmitted(Buffer.from('To: a@x.test\r\n\r\nx'), ids), reply(554, '5.6.0'))
  assert.throws(() => readSubmitted(Buffer.from('From: a@acme.test\r\nFrom: b@acme.test\r\n\r\nx'), ids), reply(554, '5.6.0'))
  assert.throws(() => readSubmitted(Buffer.from('From: a@acme.test, b@acme.test\r\n\r\nx'), ids), reply(554, '5.6.0'))
  assert.throws(() => readSubmitted(Buffer.from('From: "ceo@bank.test" <a@acme.test>\r\n\r\nx'), ids), reply(553, '5.7.1'))
})

test('X-Outbox-Metadata that is not an object of short strings, and bad tags, are refused 554 5.6.0', () => {
  const tooManyKeys = JSON.stringify(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])))
  for (const v of ['[1]', '{', '"s"', '{"a":1}', `{"${'k'.repeat(41)}":"v"}`, tooManyKeys]) {
    assert.throws(() => readSubmitted(Buffer.from(`From: a@acme.test\r\nX-Outbox-Metadata: ${v}\r\n\r\nx`), ids), reply(554, '5.6.0'), v)
  }
  for (const v of ['a b', 'a,' + 'x'.repeat(65), Array.from({ length: 11 }, (_, i) => `t${i}`).join(',')]) {
    assert.throws(() => readSubmitted(Buffer.from(`From: a@acme.test\r\nX-Outbox-Tags: ${v}\r\n\r\nx`), ids), reply(554, '5.6.0'), v)
  }
})

test('headers too long to parse cheaply are refused 554 5.6.0 before they are parsed', () => {
  assert.throws(() => readSubmitted(Buffer.from(`From: a@acme.test\r\nX-Long: ${'x'.repeat(990)}\r\n`.repeat(300) + '\r\nbody'), ids),
    reply(554, '5.6.0'))
  const folded = (name: string, n: number): string =>
    `${name}: ` + Array.from({ length: n }, (_, i) => `u${i}@x.test`).join(',\r\n ') + '\r\n'
  assert.throws(() => readSubmitted(Buffer.from('From: a@acme.test\r\n' + folded('To', 6000) + '\r\nx'), ids), reply(554, '5.6.0'))
  assert.equal(readSubmitted(Buffer.from('From: a@acme.test\r\n' + folded('To', 50) + folded('To', 3) + '\r\nx'), ids).to.size, 50)
})
