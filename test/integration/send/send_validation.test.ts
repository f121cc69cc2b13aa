import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import { startGateway, outboundOf, outboundWithIds, sendKey, body } from './helpers.ts'

let ob: TestOutbox
let org: TestOrg
let key: string
before(async () => {
  ob = await startGateway()
  org = await ob.org('pro')
  key = await sendKey(ob, org)
})
after(async () => { await ob.close() })

async function expect400 (b: unknown, field: string | RegExp): Promise<void> {
  const r = await ob.request('POST', '/v1/messages/send', { key, body: b })
  assert.equal(r.status, 400, `${JSON.stringify(b).slice(0, 200)} → ${r.status} ${r.text}`)
  assert.equal(r.body.error.code, 'validation_error')
  const fields: string[] = r.body.error.errors.map((e: { field: string }) => e.field)
  assert.ok(fields.some((f) => typeof field === 'string' ? f === field : field.test(f)),
    `expected ${String(field)} in ${JSON.stringify(r.body.error.errors)}`)
}

test('wrong types and missing fields are 400 naming each field', async () => {
  await expect400({ to: 'a@example.net', subject: 's', html: 'h' }, 'from')
  await expect400(body(org, { to: undefined }), 'to')
  await expect400(body(org, { to: 5 }), 'to')
  await expect400(body(org, { subject: 42 }), 'subject')
  await expect400(body(org, { track_clicks: 'yes' }), 'track_clicks')
  await expect400(body(org, { metadata: { a: 1 } }), 'metadata.a')
  await expect400(body(org, { unknown_field: true }), 'unknown_field')
  await expect400(body(org, { to: 'not-an-address' }), 'to')
  await expect400(body(org, { html: undefined }), 'html')
  await expect400(body(org, { subject: undefined }), 'subject')
  await expect400(body(org, { variables: { a: 'b' } }), 'variables')
  await expect400(body(org, { template_id: 'tpl_00000000000000000000000000' }), 'template_id')
})

test('recipient and metadata limits', async () => {
  const many = Array.from({ length: 51 }, (_, i) => `u${i}@example.net`)
  await expect400(body(org, { to: many }), 'to')
  await expect400(body(org, { to: many.slice(0, 30), cc: many.slice(30, 51) }), 'to')
  await expect400(body(org, { metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }), 'metadata')
  const ok = await ob.request('POST', '/v1/messages/send', {
    key, body: body(org, { to: many.slice(0, 50), metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'])) })
  })
  assert.equal(ok.status, 202, ok.text)
})

test('scheduled_at must be a date-time, not in the past, at most 72 h ahead', async () => {
  await expect400(body(org, { scheduled_at: 'tomorrow' }), 'scheduled_at')
  await expect400(body(org, { scheduled_at: new Date(Date.now() - 3600_000).toISOString() }), 'scheduled_at')
  await expect400(body(org, { scheduled_at: new Date(Date.now() + 73 * 3600_000).toISOString() }), 'scheduled_at')
})

test('reserved header names are refused, naming the header', async () => {
  for (const name of ['From', 'bcc', 'Message-ID', 'DKIM-Signature', 'List-Unsubscribe']) {
    await expect400(body(org, { headers: { [name]: 'x' } }), `headers.${name}`)
  }
  await expect400(body(org, { headers: { 'Bad Name': 'x' } }), 'headers.Bad Name')
})

test('CR, LF or NUL in any header-bound field is 400 naming the field', async () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ from: `hello@${org.domain}\r\nBcc: x@evil.test` }, 'from'],
    [{ from: `Evil\r\n <hello@${org.domain}>` }, 'from'],
    [{ to: 'a@example.net\nBcc: x@evil.test' }, 'to'],
    [{ to: ['ok@example.net', 'b@example.net\r'] }, 'to[1]'],
    [{ cc: 'c@example.net\n' }, 'cc'],
    [{ bcc: ['d@example.net\u0000'] }, 'bcc[0]'],
    [{ subject: 'Hi\r\nBcc: x@evil.test' }, 'subject'],
    [{ reply_to: `r@${org.domain}\n` }, 'reply_to'],
    [{ headers: { 'X-Tag': 'a\r\nBcc: x@evil.test' } }, 'headers.X-Tag'],
    [{ attachments: [{ filename: 'a\r\n.txt', content: 'aGk=' }] }, 'attachments[0].filename']
  ]
  for (const [extra, field] of cases) await expect400(body(org, extra), field)
})

test('a display name that would split into two addresses is refused; a quoted one is fine', async () => {
  await expect400(body(org, { from: `evil@other.test, <hello@${org.domain}>` }), 'from')
  const ok = await ob.request('POST', '/v1/messages/send', { key, body: body(org, { from: `"Acme, Inc." <hello@${org.domain}>` }) })
  assert.equal(ok.status, 202, ok.text)
})

test('attachments take only filename, content (base64) and content_type: no path or href', async () => {
  await expect400(body(org, { attachments: [{ filename: 'p', path: '/etc/passwd' }] }), 'attachments[0].path')
  await expect400(body(org, { attachments: [{ filename: 'p', content: 'aGk=', href: 'http://127.0.0.1/' }] }), 'attachments[0].href')
  await expect400(body(org, { attachments: [{ filename: 'p', content: 'not base64!' }] }), 'attachments[0].content')
})

test('malformed JSON and wrong Content-Type are 400; a body over 10 MB is 413', async () => {
  const bad = await ob.request('POST', '/v1/messages/send', { key, rawBody: '{"from":', headers: { 'content-type': 'application/json' } })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.error.code, 'validation_error')
  const type = await ob.request('POST', '/v1/messages/send', {
    key, rawBody: JSON.stringify(body(org)), headers: { 'content-type': 'text/plain' }
  })
  assert.equal(type.status, 400)
  assert.equal(type.body.error.field, 'Content-Type')
  const big = JSON.stringify(body(org, { html: 'x'.repeat(10 * 1024 * 1024) }))
  // The gateway answers before reading the body and keeps the connection, so a client still uploading sees the 413.
  for (let i = 0; i < 3; i++) {
    const r = await ob.request('POST', '/v1/messages/send', { key, rawBody: big, headers: { 'content-type': 'application/json' } })
    assert.equal(r.status, 413)
    assert.equal(r.body.error.code, 'payload_too_large')
  }
})

test('batch validation is all-or-nothing and names fields as messages[i].field', async () => {
  const before = (await outboundOf(ob, org)).length
  const r = await ob.request('POST', '/v1/messages/batch', {
    key, body: { messages: [body(org), body(org, { to: 'x@example.net\r\n' }), body(org), body(org, { headers: { Subject: 'x' } })] }
  })
  assert.equal(r.status, 400, r.text)
  const fields = r.body.error.errors.map((e: { field: string }) => e.field)
  assert.ok(fields.includes('messages[1].to'), JSON.stringify(fields))
  const semantic = await ob.request('POST', '/v1/messages/batch', {
    key, body: { messages: [body(org), body(org), body(org), body(org, { headers: { Subject: 'x' } })] }
  })
  assert.equal(semantic.status, 400)
  assert.equal(semantic.body.error.errors[0].field, 'messages[3].headers.Subject')
  const over = await ob.request('POST', '/v1/messages/batch', { key, body: { messages: Array.from({ length: 101 }, () => body(org)) } })
  assert.equal(over.status, 400)
  const empty = await ob.request('POST', '/v1/messages/batch', { key, body: { messages: [] } })
  assert.equal(empty.status, 400)
  assert.equal((await outboundOf(ob, org)).length, before, 'no message of a refused batch was queued')
})

test('a message over the inline limit is accepted, its content stored apart and the queued message carrying a reference', async () => {
  const content = Buffer.alloc(1536 * 1024, 7).toString('base64') // 1.5 MB of attachment, 2 MB as base64
  const r = await ob.request('POST', '/v1/messages/send', { key, body: body(org, { attachments: [{ filename: 'big.bin', content }] }) })
  assert.equal(r.status, 202, r.text)
  const [stored] = await outboundWithIds(ob, [r.body.id])
  assert.deepEqual(stored!.msg.attachments, [])
  assert.equal(stored!.msg.html, undefined)
  assert.ok(stored!.msg.content_ref !== undefined)
})

test('content_id: no <, >, whitespace or control characters, at most 250 characters, unique within the message', async () => {
  const img = (cid: string): Record<string, string> => ({ filename: 'logo.png', content: 'aGk=', content_id: cid })
  for (const bad of ['a b', '<logo>', 'a\r\nBcc: x@evil.test', '', 'x'.repeat(251), 'ünï']) {
    await expect400(body(org, { attachments: [img(bad)] }), 'attachments[0].content_id')
  }
  await expect400(body(org, { attachments: [img('logo@acme'), img('other'), img('LOGO@acme')] }), 'attachments[2].content_id')
  const ok = await ob.request('POST', '/v1/messages/send', {
    key, body: body(org, { attachments: [img('logo@acme'), img('x'.repeat(250))] })
  })
  assert.equal(ok.status, 202, ok.text)
})
