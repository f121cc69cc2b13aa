import { test, before, after } from 'node:test'
import { connect } from 'node:net'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { rawHttp } from '../fuzz/fuzz_helpers.ts'

/**
 * Header injection through every header-bound field of a send, attachments that point at files or URLs,
 * and oversized sends: each is a 4xx naming the field, never a 5xx and never a queued message.
 */
let ob: TestOutbox
let org: TestOrg
let key: string
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org('enterprise')
  key = await ob.key(org, ['send'], 'test')
})
after(async () => { await ob.close() })

const base = (): Record<string, any> => ({ from: `me@${org.domain}`, to: 'you@example.com', subject: 'hello', text: 'body' })
const fieldsOf = (res: { body: any }): string[] => (res.body?.error?.errors ?? []).map((e: any) => e.field as string)

test('CR, LF or NUL in any header-bound field → 400 naming the field', async () => {
  for (const bad of ['\r\nBcc: victim@example.com', '\nX-Evil: 1', '\r', '\u0000']) {
    const cases: Array<[string, (b: Record<string, any>) => void, RegExp]> = [
      ['from', (b) => { b.from = `me@${org.domain}${bad}` }, /^from$/],
      ['from display name', (b) => { b.from = `Me${bad} <me@${org.domain}>` }, /^from$/],
      ['to', (b) => { b.to = `you@example.com${bad}` }, /^to/],
      ['to array', (b) => { b.to = ['ok@example.com', `you${bad}@example.com`] }, /^to/],
      ['cc', (b) => { b.cc = `c@example.com${bad}` }, /^cc/],
      ['bcc', (b) => { b.bcc = [`Name${bad} <b@example.com>`] }, /^bcc/],
      ['reply_to', (b) => { b.reply_to = `r@example.com${bad}` }, /^reply_to$/],
      ['subject', (b) => { b.subject = `hello${bad}` }, /^subject$/],
      ['header value', (b) => { b.headers = { 'X-Campaign': `v${bad}` } }, /^headers/],
      ['header name', (b) => { b.headers = { [`X-A${bad}`]: 'v' } }, /^headers/],
      ['attachment filename', (b) => { b.attachments = [{ filename: `a${bad}.txt`, content: 'aGk=' }] }, /^attachments\[0\]\.filename$/]
    ]
    for (const [name, mutate, field] of cases) {
      const body = base()
      mutate(body)
      const res = await ob.request('POST', '/v1/messages/send', { key, body })
      const what = `${name} with ${JSON.stringify(bad)}: ${res.status} ${res.text.slice(0, 300)}`
      assert.equal(res.status, 400, what)
      assert.equal(res.body.error.code, 'validation_error', what)
      assert.ok(fieldsOf(res).some((f) => field.test(f)), what)
    }
  }
})

test('headers that speak for a receiving server, resending or the whole message are refused, naming the header', async () => {
  const reserved = [
    'Authentication-Results', 'authentication-results', 'Received', 'Received-SPF', 'ARC-Seal', 'ARC-Message-Signature',
    'ARC-Authentication-Results', 'Resent-From', 'Resent-Message-ID', 'DKIM-Signature', 'Return-Path', 'Content-Disposition'
  ]
  for (const name of reserved) {
    const res = await ob.request('POST', '/v1/messages/send', {
      key, body: { ...base(), headers: { 'X-Fine': '1', [name]: 'mx.example.com; dkim=pass' } }
    })
    const what = `${name}: ${res.status} ${res.text.slice(0, 300)}`
    assert.equal(res.status, 400, what)
    assert.equal(res.body.error.code, 'validation_error', what)
    assert.deepEqual(fieldsOf(res), [`headers.${name}`], what)
    assert.match(res.body.error.errors[0].message, new RegExp(`^${name} is reserved`), what)
  }
  // In a batch the item is named too.
  const batch = await ob.request('POST', '/v1/messages/batch', {
    key, body: { messages: [base(), { ...base(), headers: { Received: 'from x' } }] }
  })
  assert.equal(batch.status, 400, batch.text)
  assert.deepEqual(fieldsOf(batch), ['messages[1].headers.Received'])
  // Names that merely start alike are the caller's own.
  for (const name of ['X-Received', 'Arcade', 'Resentment', 'X-Authentication-Results']) {
    const res = await ob.request('POST', '/v1/messages/send', { key, body: { ...base(), headers: { [name]: 'v' } } })
    assert.equal(res.status, 202, `${name}: ${res.text}`)
  }
})

test('a From display name that shows another address is refused; one showing the real address is fine', async () => {
  const spoofs = [
    `"ceo@bank.test" <me@${org.domain}>`,
    `"CEO (ceo@bank.test)" <me@${org.domain}>`,
    `"me@${org.domain} via ceo@bank.test" <me@${org.domain}>`,
    `"ceo\uFF20bank.test" <me@${org.domain}>`, // full-width at sign
    `"other@${org.domain}" <me@${org.domain}>`
  ]
  for (const from of spoofs) {
    const res = await ob.request('POST', '/v1/messages/send', { key, body: { ...base(), from } })
    const what = `${from}: ${res.status} ${res.text.slice(0, 300)}`
    assert.equal(res.status, 400, what)
    assert.equal(res.body.error.code, 'validation_error', what)
    assert.deepEqual(fieldsOf(res), ['from'], what)
    assert.match(res.body.error.errors[0].message, /display name/, what)
  }
  for (const from of [`"me@${org.domain}" <me@${org.domain}>`, `"Me (ME@${org.domain.toUpperCase()})" <me@${org.domain}>`,
    `Acme Billing <me@${org.domain}>`, `"Acme, Inc." <me@${org.domain}>`]) {
    const res = await ob.request('POST', '/v1/messages/send', { key, body: { ...base(), from } })
    assert.equal(res.status, 202, `${from}: ${res.text}`)
  }
})

test('attachments that point at files or URLs are refused by the schema; a path as content is inert base64', async () => {
  for (const extra of [{ path: '/etc/passwd' }, { href: 'http://127.0.0.1/' }, { raw: 'From: x' }, { contentDisposition: 'inline' }, { encoding: 'utf8' }]) {
    const body = { ...base(), attachments: [{ filename: 'a.txt', content: 'aGk=', ...extra }] }
    const res = await ob.request('POST', '/v1/messages/send', { key, body })
    const name = Object.keys(extra)[0]!
    assert.equal(res.status, 400, `${name}: ${res.text}`)
    assert.ok(fieldsOf(res).some((f) => f.startsWith('attachments[0]')), `${name}: ${res.text}`)
  }
  for (const content of ['file:///etc/passwd', 'http://127.0.0.1/secret', '../../etc/passwd', 'C:\\Windows\\win.ini']) {
    const res = await ob.request('POST', '/v1/messages/send', { key, body: { ...base(), attachments: [{ filename: 'a.txt', content }] } })
    assert.equal(res.status, 400, `${content}: ${res.text}`)
  }
  // '/etc/passwd' is made of base64 characters: accepted as the bytes it decodes to, never opened as a path
  // (the composer sends attachments as base64 data with file and URL access disabled).
  const inert = await ob.request('POST', '/v1/messages/send', {
    key, body: { ...base(), attachments: [{ filename: 'a.txt', content: '/etc/passwd' }] }
  })
  assert.ok(inert.status === 202 || inert.status === 400, inert.text)
  for (const field of ['html', 'text']) {
    const res = await ob.request('POST', '/v1/messages/send', { key, body: { ...base(), [field]: { path: '/etc/passwd' } } })
    assert.equal(res.status, 400, `${field} as an object: ${res.text}`)
  }
})

test('10,000 recipients in one send → 400', async () => {
  const to = Array.from({ length: 10_000 }, (_, i) => `r${i}@example.com`)
  for (const field of ['to', 'cc', 'bcc']) {
    const res = await ob.request('POST', '/v1/messages/send', { key, body: { ...base(), [field]: to } })
    assert.equal(res.status, 400, `${field}: ${res.text.slice(0, 200)}`)
    assert.ok(fieldsOf(res).some((f) => f.startsWith(field)), res.text.slice(0, 200))
  }
  // 50 each in to, cc and bcc: every list within its own cap, the total over the per-message recipient limit.
  const fifty = (p: string): string[] => Array.from({ length: 50 }, (_, i) => `${p}${i}@example.com`)
  const spread = await ob.request('POST', '/v1/messages/send', {
    key, body: { ...base(), to: fifty('t'), cc: fifty('c'), bcc: fifty('b') }
  })
  assert.ok(spread.status < 500, spread.text.slice(0, 200))
})

test('a 5 MB subject → 400 or 413, never 5xx; an 11 MB body → 413', async () => {
  const res = await ob.request('POST', '/v1/messages/send', { key, body: { ...base(), subject: 's'.repeat(5 * 1024 * 1024) } })
  assert.ok(res.status === 400 || res.status === 413, `${res.status} ${res.text.slice(0, 200)}`)
  const huge = await rawHttp(ob.proc.gateway!.port,
    `POST /v1/messages/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${11 * 1024 * 1024}\r\n\r\n{${' '.repeat(11 * 1024 * 1024 - 1)}`)
  assert.ok(huge !== null)
  assert.equal(huge.status, 413)
  assert.equal(JSON.parse(huge.body).error.code, 'payload_too_large')
  assert.equal((await ob.request('GET', '/healthz')).status, 200)
})

/** Writes `request` and `body` on one connection and collects what comes back until the server closes it or `ms` pass. */
async function exchange (port: number, parts: Array<string | Buffer>, ms: number): Promise<{ text: string, closed: boolean }> {
  return await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    let closed = false
    const timer = setTimeout(() => { socket.destroy(); resolve({ text, closed }) }, ms)
    socket.on('data', (d) => { text += d.toString('latin1') })
    socket.on('error', () => {})
    socket.on('close', () => { closed = true; clearTimeout(timer); resolve({ text, closed }) })
    for (const p of parts) socket.write(p)
  })
}

test('after a 413 the rest of a declared body is read and the connection serves the next request; ' +
  'a stalled upload over 64 MB is closed after 5 s', async () => {
  const port = ob.proc.gateway!.port
  const declared = 11 * 1024 * 1024
  const head = `POST /v1/messages/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${declared}\r\n\r\n`
  const kept = await exchange(port, [head, Buffer.alloc(declared, 0x20), 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'], 5000)
  const statuses = [...kept.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]))
  assert.deepEqual(statuses, [413, 200], kept.text.slice(0, 400))
  const closed = await exchange(port, [
    `POST /v1/messages/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${65 * 1024 * 1024}\r\n\r\n{`
  ], 9000)
  assert.match(closed.text, /^HTTP\/1\.1 413/)
  assert.equal(closed.closed, true)
})

test('a 100 KB header on a send → 4xx or a cleanly refused connection; the server stays up', async () => {
  const r = await rawHttp(ob.proc.gateway!.port,
    `POST /v1/messages/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Big: ${'h'.repeat(100 * 1024)}\r\n` +
    'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}', 5000, true)
  if (r !== null) assert.ok(r.status >= 400 && r.status < 500, `${r.status}`)
  const ok = await ob.request('POST', '/v1/messages/send', { key, body: base() })
  assert.equal(ok.status, 202, ok.text)
})
