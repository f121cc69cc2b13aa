import { test } from 'node:test'
import assert from 'node:assert/strict'
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { authenticate } from 'mailauth'
import { simpleParser, type AddressObject } from 'mailparser'
import { ComposedMessage, type ComposeContext } from '../../../engine/actor/compose.ts'
import { SubmittedMessage } from '../../../engine/actor/raw_submission.ts'
import type { TaskMessage } from '../../../engine/actor/task.ts'
import { verifyToken } from '../../../protocol/mod.ts'

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
const ed = generateKeyPairSync('ed25519')
const SECRET = Buffer.alloc(32, 3)

function txt (key: KeyObject, k: 'rsa' | 'ed25519'): string {
  const der = key.export({ type: 'spki', format: 'der' })
  // an ed25519 record carries the raw 32-byte key (RFC 8463 §4.2), an RSA one the SubjectPublicKeyInfo
  return `v=DKIM1; k=${k}; p=${(k === 'ed25519' ? der.subarray(-32) : der).toString('base64')}`
}
const RECORDS: Record<string, string> = {
  'rsa1._domainkey.sender.example': txt(rsa.publicKey, 'rsa'),
  'ed1._domainkey.sender.example': txt(ed.publicKey, 'ed25519')
}
const resolver = async (name: string, rr: string): Promise<unknown> => {
  if (rr === 'TXT' && RECORDS[name] !== undefined) return [[RECORDS[name]]]
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
}

async function dkimResults (raw: Buffer): Promise<string[]> {
  const r = await authenticate(raw,
    { ip: '127.0.0.1', helo: 'engine.test', sender: 'b@sender.example', mta: 'sink.test', resolver } as Parameters<typeof authenticate>[1])
  return r.dkim.results.map((s) => `${String(s.status.result)}:${String((s as { algo?: string }).algo)}`)
}

function ctx (withEd25519 = false): ComposeContext {
  return {
    publicUrl: 'https://t.example',
    secret: SECRET,
    domain: 'sender.example',
    dkim: [
      { domain: 'sender.example', selector: 'rsa1', key: rsa.privateKey },
      ...(withEd25519 ? [{ domain: 'sender.example', selector: 'ed1', key: ed.privateKey }] : [])
    ],
    verpKey: { id: 'k1', secret: Buffer.alloc(32, 5) }
  }
}

const LONG_WORD = 'x'.repeat(1500)
function message (over: Partial<TaskMessage> = {}): TaskMessage {
  return {
    id: 'msg_01jd5k3v7q8r9s0t1u2v3w4x5y',
    org_id: 'org_1',
    from: '"Jürgen Müller" <sender@sender.example>',
    to: ['Zoë Ångström <zoe@dest.example>', 'bob@dest.example'],
    cc: ['"Cécile" <cc@dest.example>'],
    reply_to: 'Réponse <reply@sender.example>',
    subject: 'Grüße — 你好, a subject long enough to be folded over more than one line of the header block',
    html: `<html><body><p>Héllo <a href="https://shop.example/a?x=1&amp;y=2">shop</a></p><p>${LONG_WORD}</p></body></html>`,
    text: `Héllo there\n${LONG_WORD}\nbye`,
    headers: { 'X-Campaign': 'spring', 'X-Note': 'naïve value' },
    attachments: [
      {
        filename: 'résumé.pdf',
        content: Buffer.from('%PDF-1.4 binary \u0000\u00ff', 'latin1').toString('base64'),
        content_type: 'application/pdf'
      },
      { filename: 'notes.txt', content: Buffer.from('plain notes').toString('base64') }
    ],
    track_opens: true,
    track_clicks: true,
    ...over
  }
}

function addresses (a: AddressObject | AddressObject[] | undefined): string[] {
  return [a ?? []].flat().flatMap((o) => o.value.map((v) => `${v.name}|${v.address ?? ''}`))
}

test('the composed message parses back to what was sent: headers, RFC 2047 names and subject, html, text, attachments', async () => {
  const msg = message()
  const composed = new ComposedMessage(msg, msg, ctx())
  const { envelope, raw } = composed.forRecipient('zoe@dest.example')
  assert.match(envelope.from, /^bounces\+msg_.*@bounces\.sender\.example$/)
  assert.deepEqual(envelope.to, ['zoe@dest.example'])
  for (const line of raw.toString('latin1').split('\r\n')) assert.ok(line.length <= 998, `a line of ${line.length} octets`)
  assert.ok(raw.every((byte) => byte < 0x80), 'only ASCII on the wire')
  assert.ok(!/(^|[^\r])\n/.test(raw.toString('latin1')), 'every line ends with CRLF')

  const p = await simpleParser(raw)
  assert.equal(p.subject, msg.subject)
  assert.equal(p.messageId, `<${msg.id}@sender.example>`)
  assert.ok(p.date instanceof Date && Math.abs(p.date.getTime() - Date.now()) < 60_000)
  assert.deepEqual(addresses(p.from), ['Jürgen Müller|sender@sender.example'])
  assert.deepEqual(addresses(p.to), ['Zoë Ångström|zoe@dest.example', '|bob@dest.example'])
  assert.deepEqual(addresses(p.cc), ['Cécile|cc@dest.example'])
  assert.deepEqual(addresses(p.replyTo), ['Réponse|reply@sender.example'])
  assert.equal(p.headers.get('x-campaign'), 'spring')
  // a custom header is sent as written, in RFC 2047 words when it is not ASCII
  assert.equal(p.headers.get('x-note'), '=?UTF-8?Q?na=C3=AFve_value?=')
  const list = p.headers.get('list') as unknown as { unsubscribe: { url: string, mail: string }, 'unsubscribe-post': { name: string } }
  assert.equal(list['unsubscribe-post'].name, 'List-Unsubscribe=One-Click')
  const unsub = list.unsubscribe
  const token = /\/t\/u\/(.+)$/.exec(unsub.url)![1]!
  assert.deepEqual(verifyToken(SECRET, token), { k: 'u', o: 'org_1', m: msg.id, r: 'zoe@dest.example' })
  assert.equal(unsub.mail, `${envelope.from}?subject=unsubscribe`)

  assert.equal(p.text, `Héllo there\n${LONG_WORD}\nbye`)
  const html = p.html as string
  assert.ok(html.includes(`<p>${LONG_WORD}</p>`))
  assert.ok(html.includes('Héllo <a href="https://t.example/t/c/'), html.slice(0, 200))
  assert.ok(html.includes('/t/o/'), 'open pixel')
  assert.deepEqual(p.attachments.map((a) => [a.filename, a.contentType, a.content.toString('latin1')]), [
    ['résumé.pdf', 'application/pdf', '%PDF-1.4 binary \u0000\u00ff'],
    ['notes.txt', 'text/plain', 'plain notes']
  ])
})

test('each recipient gets its own tokens, and the DKIM signature (RSA, with an ed25519 one next to it) ' +
  'verifies with mailauth', async () => {
  const msg = message()
  const composed = new ComposedMessage(msg, msg, ctx(true))
  const a = composed.forRecipient('zoe@dest.example').raw
  const b = composed.forRecipient('bob@dest.example').raw
  assert.ok(!a.subarray(a.indexOf('\r\n\r\n')).equals(b.subarray(b.indexOf('\r\n\r\n'))))
  assert.deepEqual(await dkimResults(a), ['pass:rsa-sha256', 'pass:ed25519-sha256'])
  assert.deepEqual(await dkimResults(b), ['pass:rsa-sha256', 'pass:ed25519-sha256'])
  const head = a.toString('latin1').slice(0, a.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ')
  const signed = /^DKIM-Signature: .*?\bh=([^;]*)/m.exec(head)![1]!.split(':').map((h) => h.trim().toLowerCase())
  for (const h of ['from', 'to', 'cc', 'reply-to', 'subject', 'date', 'message-id', 'list-unsubscribe', 'list-unsubscribe-post']) {
    assert.ok(signed.includes(h), `${h} signed: ${signed.join(':')}`)
  }

  // the checks can fail: a changed header or body byte breaks both signatures
  const text = a.toString('latin1')
  const tamperedCopies = [
    text.replace('List-Unsubscribe=One-Click', 'List-Unsubscribe=Two-Clicks'),
    text.replace('Message-ID: <msg_', 'Message-ID: <msh_'),
    text.replace('xxxxxxxx', 'xxxxxxxy')
  ]
  for (const tampered of tamperedCopies) {
    assert.notEqual(tampered, text)
    const results = await dkimResults(Buffer.from(tampered, 'latin1'))
    assert.ok(results.every((r) => !r.startsWith('pass')), results.join(','))
  }
})

test('untracked mail shares one body between recipients; text only, html only and no attachments compose too', async () => {
  for (const over of [
    { track_opens: false, track_clicks: false },
    { html: undefined, attachments: [] },
    { text: undefined, attachments: [] },
    { text: undefined, track_opens: false, track_clicks: false }
  ] satisfies Array<Partial<TaskMessage>>) {
    const msg = message(over)
    const composed = new ComposedMessage(msg, msg, ctx())
    const a = composed.forRecipient('zoe@dest.example').raw
    const b = composed.forRecipient('bob@dest.example').raw
    const tracked = msg.html !== undefined && msg.track_opens
    assert.equal(a.subarray(a.indexOf('\r\n\r\n')).equals(b.subarray(b.indexOf('\r\n\r\n'))), !tracked, JSON.stringify(over))
    assert.deepEqual(await dkimResults(a), ['pass:rsa-sha256'], JSON.stringify(over))
    const p = await simpleParser(a)
    assert.equal(p.text?.trim(), msg.text === undefined ? (msg.html === undefined ? '' : p.text?.trim()) : msg.text, JSON.stringify(over))
    if (msg.html !== undefined) assert.ok((p.html as string).includes(LONG_WORD))
    assert.equal(p.attachments.length, msg.attachments.length)
  }
})

test('an attachment with content_id is sent inline in multipart/related next to the html, and both signatures still verify', async () => {
  const png = Buffer.from('\u0089PNG\r\n\u001a\n not really', 'latin1')
  for (const text of [undefined, 'plain']) {
    const msg = message({
      html: '<p>Logo: <img src="cid:logo@sender.example"></p>',
      ...(text !== undefined ? { text } : { text: undefined }),
      attachments: [
        { filename: 'logo.png', content: png.toString('base64'), content_type: 'image/png', content_id: 'logo@sender.example' },
        { filename: 'notes.txt', content: Buffer.from('plain notes').toString('base64') }
      ]
    })
    const { raw } = new ComposedMessage(msg, msg, ctx(true)).forRecipient('zoe@dest.example')
    const wire = raw.toString('latin1')
    // multipart/mixed [ (alternative [ text, ) related [ html, logo ] ( ] ), notes ]
    const related = wire.indexOf('Content-Type: multipart/related')
    assert.ok(related > 0, 'a multipart/related part')
    const logoHead = /Content-Type: image\/png[^]*?\r\n\r\n/.exec(wire)![0]
    assert.match(logoHead, /^Content-ID: <logo@sender\.example>$/m)
    assert.match(logoHead, /^Content-Disposition: inline; filename=logo\.png$/m)
    assert.ok(wire.indexOf('Content-Type: text/html') > related && wire.indexOf('Content-Type: image/png') > related)
    assert.ok(wire.indexOf('filename=notes.txt') > wire.indexOf('Content-Type: image/png'), 'the plain attachment stays outside')

    const p = await simpleParser(raw)
    const logo = p.attachments.find((a) => a.filename === 'logo.png')!
    assert.equal(logo.contentDisposition, 'inline')
    assert.equal(logo.cid, 'logo@sender.example')
    assert.equal(logo.related, true)
    assert.deepEqual(logo.content, png)
    const notes = p.attachments.find((a) => a.filename === 'notes.txt')!
    assert.equal(notes.contentDisposition, 'attachment')
    // mailparser swaps a cid: reference it resolves for the part's data: URL
    assert.ok((p.html as string).includes(`<img src="data:image/png;base64,${png.toString('base64')}">`), p.html as string)
    assert.deepEqual(await dkimResults(raw), ['pass:rsa-sha256', 'pass:ed25519-sha256'])
  }
})

test('without html an attachment with content_id is an ordinary attachment: nothing refers to it', async () => {
  const msg = message({
    html: undefined,
    text: 'plain only',
    attachments: [{ filename: 'logo.png', content: Buffer.from('png').toString('base64'), content_type: 'image/png', content_id: 'logo' }]
  })
  const { raw } = new ComposedMessage(msg, msg, ctx()).forRecipient('zoe@dest.example')
  assert.ok(!raw.toString('latin1').includes('multipart/related'))
  const p = await simpleParser(raw)
  assert.deepEqual(p.attachments.map((a) => [a.filename, a.contentDisposition]), [['logo.png', 'attachment']])
})

test('a message carrying its domain\'s return-path host goes out with the VERP address at that host', () => {
  const own = new ComposedMessage(message({ return_path_host: 'rp.sender.example' }), message(), ctx()).forRecipient('bob@dest.example')
  assert.match(own.envelope.from, /^bounces\+msg_[0-9a-z]{26}-k1[0-9a-z]{16}@rp\.sender\.example$/)
  assert.match(own.raw.toString('latin1'), /<mailto:bounces\+[^@]+@rp\.sender\.example\?subject=unsubscribe>/)
  const plain = new ComposedMessage(message(), message(), ctx()).forRecipient('bob@dest.example')
  assert.match(plain.envelope.from, /@bounces\.sender\.example$/, 'without it, the default')
})

test('mail submitted by SMTP goes out with the return-path host it carries, and its unsubscribe link on the context\'s base', () => {
  const raw = 'From: sender@sender.example\r\nTo: bob@dest.example\r\nSubject: hi\r\n\r\nHello\r\n'
  const own = new SubmittedMessage(message({ return_path_host: 'rp.sender.example', submitted: { raw } }), raw,
    { ...ctx(), publicUrl: 'https://links.sender.example' }).forRecipient('bob@dest.example')
  assert.match(own.envelope.from, /@rp\.sender\.example$/)
  const head = own.raw.toString('latin1')
  assert.match(head, /List-Unsubscribe: <https:\/\/links\.sender\.example\/t\/u\/[^>]+>,\r\n <mailto:bounces\+[^@]+@rp\.sender\.example\?/)
})
