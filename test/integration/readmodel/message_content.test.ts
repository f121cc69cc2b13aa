import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { simpleParser } from 'mailparser'
import { jetstreamManager } from '@nats-io/jetstream'
import { STREAM_MESSAGE_CONTENT, messageContentSubject } from '../../../protocol/mod.ts'
import { READ_MODEL_KEYS } from '../../../stores/read_model/message_store_keys.ts'
import { queuedId, startSubmissionScenario, submissionClient, type SubmissionScenario } from '../../helpers/submission.ts'
import type { HttpResult } from '../../helpers/outbox.ts'
import { template } from '../send/helpers.ts'
import { eventually } from '../../helpers/waiting.ts'

// The whole path: the gateway accepts, the engine renders and records the content view, the gateway serves it.
let s: SubmissionScenario
let sendKey: string
let readKey: string

before(async () => {
  s = await startSubmissionScenario()
  sendKey = await s.ob.key(s.org, ['send'])
  readKey = await s.ob.key(s.org, ['read'])
})
after(async () => { await s.close() })

async function send (body: Record<string, unknown>, key = sendKey): Promise<string> {
  const r = await s.ob.request('POST', '/v1/messages/send', {
    key, body: { from: `App <app@${s.org.domain}>`, to: 'ann@dest.example', ...body }
  })
  assert.equal(r.status, 202, r.text)
  return r.body.id
}

/** The content once the engine recorded it (404 until then). */
async function content (id: string, key = readKey): Promise<HttpResult> {
  let r: HttpResult | undefined
  await eventually(async () => (r = await s.ob.request('GET', `/v1/messages/${id}/content`, { key })).status === 200, `content of ${id}`)
  return r!
}

test('an HTML send: subject, html before tracking, text, addressing, custom headers and attachment metadata, never the bytes ' +
  'but those of a small inline image', async () => {
  const html = '<p>Hello <a href="https://example.org/x">there</a> <img src="cid:logo1"></p>'
  const id = await send({
    to: ['ann@dest.example'],
    cc: 'cc@dest.example',
    reply_to: `help@${s.org.domain}`,
    subject: 'Your receipt',
    html,
    text: 'Hello there',
    headers: { 'X-Campaign': 'spring' },
    attachments: [
      { filename: 'receipt.pdf', content: Buffer.from('%PDF-1.4 eleven').toString('base64') },
      { filename: 'logo.png', content: Buffer.from([1, 2, 3]).toString('base64'), content_type: 'image/png', content_id: 'logo1' }
    ]
  })
  const r = await content(id)
  assert.deepEqual(r.body, {
    id,
    subject: 'Your receipt',
    from: `App <app@${s.org.domain}>`,
    to: ['ann@dest.example'],
    cc: ['cc@dest.example'],
    reply_to: `help@${s.org.domain}`,
    html,
    text: 'Hello there',
    headers: { 'X-Campaign': 'spring' },
    attachments: [
      { filename: 'receipt.pdf', content_type: 'application/pdf', size: 15, content_id: null },
      // a small inline image's bytes are kept, for showing the HTML's cid: image
      { filename: 'logo.png', content_type: 'image/png', size: 3, content_id: 'logo1', data: Buffer.from([1, 2, 3]).toString('base64') }
    ]
  })
  // what the recipient got was rewritten per recipient; the content view shows the html before that
  await eventually(() => s.sink.to('ann@dest.example').length > 0, 'delivered')
  const got = await simpleParser(s.sink.to('ann@dest.example').at(-1)!.raw)
  assert.doesNotMatch(String(got.html), /href="https:\/\/example\.org\/x"/, 'the delivered link is a tracking link')
  assert.ok(!r.text.includes(Buffer.from('%PDF-1.4 eleven').toString('base64')), 'attachment bytes are not returned')
})

test('a text-only send has html null', async () => {
  const id = await send({ subject: 'Plain', text: 'Only text' })
  const r = await content(id)
  assert.equal(r.body.html, null)
  assert.equal(r.body.text, 'Only text')
  assert.equal(r.body.reply_to, null)
  assert.deepEqual(r.body.attachments, [])
})

test('a template send shows the template rendered with its variables (HTML-escaped in the html)', async () => {
  const t = await template(s.ob, s.org)
  const id = await send({ template_id: t.id, variables: { name: 'Zoë <b>' } })
  const r = await content(id)
  assert.equal(r.body.subject, 'Welcome Zoë <b>')
  assert.equal(r.body.html, '<p>Hi Zoë &lt;b&gt;</p>')
  assert.equal(r.body.text, 'Hi Zoë <b>')
})

test('an SMTP submission shows the text and html parts of the submitted MIME, its own headers and its attachments', async () => {
  const key = await s.ob.key(s.org, ['send'])
  const client = submissionClient(s.port, key)
  const info = await client.sendMail({
    from: `App <app@${s.org.domain}>`,
    to: 'smtp@dest.example',
    subject: 'Grüße',
    text: 'Text part',
    html: '<p>HTML part</p>',
    headers: { 'X-Order': 'A-17' },
    attachments: [{ filename: 'notes.txt', content: 'twelve bytes' }]
  })
  client.close()
  const id = queuedId(info.response)
  const r = await content(id)
  assert.equal(r.body.subject, 'Grüße')
  assert.equal(r.body.text, 'Text part')
  assert.equal(r.body.html, '<p>HTML part</p>')
  assert.equal(r.body.headers['X-Order'], 'A-17')
  assert.equal(r.body.headers.Subject, undefined, 'addressing and subject are fields of their own')
  assert.deepEqual(r.body.attachments, [{ filename: 'notes.txt', content_type: 'text/plain', size: 12, content_id: null }])
})

test('a scheduled message has its content long before its time', async () => {
  const id = await send({ subject: 'Later', text: 'later', scheduled_at: new Date(Date.now() + 3600_000).toISOString() })
  const r = await content(id)
  assert.equal(r.body.text, 'later')
  assert.equal((await s.ob.request('GET', `/v1/messages/${id}`, { key: readKey })).body.status, 'scheduled')
})

test('a sandbox message has its content, readable by its organisation', async () => {
  const id = await send({ to: 'delivered@simulator.test', subject: 'Sandbox', html: '<p>sandbox</p>' },
    await s.ob.key(s.org, ['send'], 'test'))
  const r = await content(id)
  assert.equal(r.body.html, '<p>sandbox</p>')
})

test('a 1.5 MB html body, queued through the object store and recorded in several parts, is shown whole', async () => {
  // random text compresses to about half: several 128 KB parts
  const html = `<div>${Array.from({ length: 12_000 }, () => `<p>${randomBytes(60).toString('hex')}</p>`).join('\n')}</div>`
  assert.ok(html.length > 1.5e6)
  const id = await send({ subject: 'Long', html })
  const r = await content(id)
  assert.equal(r.body.html.length, html.length)
  assert.equal(r.body.html, html)
  const jsm = await jetstreamManager(s.ob.proc.nc)
  assert.notEqual(await jsm.direct.getMessage(STREAM_MESSAGE_CONTENT, { last_by_subj: messageContentSubject(id, 1) }), null,
    'stored in several parts')
})

test('another organisation\'s message answers as GET /v1/messages/{id} does (403), an unknown id 404, ' +
  'and 404 once the record is gone', async () => {
  const id = await send({ subject: 'Mine', text: 'mine' })
  await content(id)
  const other = await s.ob.org()
  const theirs = await s.ob.request('GET', `/v1/messages/${id}/content`, { key: other.adminKey })
  const record = await s.ob.request('GET', `/v1/messages/${id}`, { key: other.adminKey })
  assert.equal(theirs.status, 403)
  assert.equal(record.status, 403)
  assert.equal(theirs.body.error.code, 'forbidden')
  assert.equal(assertNoBody(theirs), true)

  const unknown = await s.ob.request('GET', '/v1/messages/msg_00000000000000000000000000/content', { key: readKey })
  assert.equal(unknown.status, 404)
  assert.equal(unknown.body.error.code, 'not_found')

  // the record expiring after 30 days, as Redis expires it: the content goes with it
  await s.ob.proc.redis.del(READ_MODEL_KEYS.message(s.org.orgId, id), READ_MODEL_KEYS.messageOwner(id))
  const gone = await s.ob.request('GET', `/v1/messages/${id}/content`, { key: readKey })
  assert.equal(gone.status, 404)
  assert.equal(gone.body.error.code, 'not_found')
})

function assertNoBody (r: HttpResult): boolean {
  return !r.text.includes('"html"') && !r.text.includes('mine')
}
