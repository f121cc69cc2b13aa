import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { base64Size, contentView } from '../../../engine/content_view.ts'
import { INLINE_IMAGE_MAX_BYTES, INLINE_IMAGES_MAX_BYTES } from '../../../engine/inline_images.ts'
import type { QueuedMessage } from '../../../protocol/mod.ts'

const base: QueuedMessage = {
  v: 1,
  id: 'msg_01jd5q0r7y3k8m2n4p6s9t1v3w',
  org_id: 'org_01jd5q0r7y3k8m2n4p6s9t1v3w',
  domain_id: 'dom_01jd5q0r7y3k8m2n4p6s9t1v3w',
  key_id: 'key_01jd5q0r7y3k8m2n4p6s9t1v3w',
  environment: 'live',
  from: 'app@example.com',
  to: ['ann@example.net'],
  cc: [],
  bcc: ['hidden@example.net'],
  subject: 'Hi',
  html: '<p>Hi</p>',
  headers: {},
  metadata: {},
  attachments: [],
  track_opens: true,
  track_clicks: true,
  suppressed: [],
  created_at: '2026-11-25T08:00:00.000Z'
}

test('base64Size counts decoded bytes, ignoring line breaks and padding', () => {
  for (const n of [0, 1, 2, 3, 4, 5, 100, 1001]) {
    const b64 = randomBytes(n).toString('base64')
    assert.equal(base64Size(b64), n, `${n} bytes`)
    assert.equal(base64Size(b64.replace(/(.{76})/g, '$1\r\n')), n, `${n} bytes, wrapped`)
    assert.equal(base64Size(b64.replace(/=+$/, '')), n, `${n} bytes, unpadded`)
  }
})

test('a template send is rendered with its variables; bcc is not part of the content', async () => {
  const c = await contentView({
    ...base, template_id: 'tpl_01jd5q0r7y3k8m2n4p6s9t1v3w', subject: 'Hello {{name}}', html: '<p>{{name}}</p>', text: 'Hi {{name}}',
    variables: { name: 'A&B' }
  })
  assert.deepEqual({ subject: c.subject, html: c.html, text: c.text }, { subject: 'Hello A&B', html: '<p>A&amp;B</p>', text: 'Hi A&B' })
  assert.equal(JSON.stringify(c).includes('hidden@'), false)
})

test('a submitted message: its parts, its own headers, attachment sizes without their bytes', async () => {
  const payload = randomBytes(300_000)
  const raw = [
    'From: app@example.com', 'To: ann@example.net', 'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=', 'X-Order: =?UTF-8?Q?N=C2=B0_7?=',
    'X-Long: one', ' two', 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="b1"', '',
    '--b1', 'Content-Type: multipart/alternative; boundary="b2"', '',
    '--b2', 'Content-Type: text/plain; charset=utf-8', '', 'plain part',
    '--b2', 'Content-Type: text/html; charset=utf-8', '', '<p>html part</p>', '--b2--',
    '--b1', 'Content-Type: application/octet-stream; name="data.bin"', 'Content-Disposition: attachment; filename="data.bin"',
    'Content-Transfer-Encoding: base64', '',
    payload.toString('base64').replace(/(.{76})/g, '$1\r\n'), '--b1--', ''
  ].join('\r\n')
  const c = await contentView({ ...base, html: undefined, subject: 'Grüße', submitted: { raw: Buffer.from(raw).toString('latin1') } })
  assert.equal(c.text, 'plain part')
  assert.equal(c.html, '<p>html part</p>')
  assert.deepEqual(c.headers, { 'X-Order': 'N° 7', 'X-Long': 'one two' })
  assert.deepEqual(c.attachments,
    [{ filename: 'data.bin', content_type: 'application/octet-stream', size: payload.length, content_id: null }])
})

test('inline images are kept with the content within their bounds; other attachments are described only', async () => {
  const small = randomBytes(1000).toString('base64')
  const big = randomBytes(INLINE_IMAGE_MAX_BYTES + 1).toString('base64')
  const quarter = randomBytes(INLINE_IMAGE_MAX_BYTES).toString('base64')
  const c = await contentView({
    ...base,
    attachments: [
      { filename: 'logo.png', content: small.replace(/(.{76})/g, '$1\r\n'), content_id: 'logo@shop' },
      { filename: 'huge.png', content: big, content_id: 'huge@shop' },
      { filename: 'notes.txt', content: small, content_id: 'notes@shop' },
      { filename: 'photo.png', content: small },
      ...[1, 2, 3, 4].map((i) => ({ filename: `banner${i}.jpg`, content: quarter, content_id: `banner${i}@shop` }))
    ]
  })
  assert.deepEqual(c.attachments.map((a) => [a.filename, a.data !== undefined]), [
    ['logo.png', true], ['huge.png', false], ['notes.txt', false], ['photo.png', false],
    ['banner1.jpg', true], ['banner2.jpg', true], ['banner3.jpg', true], ['banner4.jpg', false]
  ])
  assert.equal(c.attachments[0]!.data, small, 'its base64, unwrapped')
  const kept = c.attachments.reduce((sum, a) => sum + (a.data === undefined ? 0 : a.size), 0)
  assert.ok(kept <= INLINE_IMAGES_MAX_BYTES, `${kept} bytes kept`)
})

test('a submitted message keeps its small inline images, not its large ones', async () => {
  const small = randomBytes(2000)
  const large = randomBytes(INLINE_IMAGE_MAX_BYTES + 10)
  const part = (name: string, cid: string, bytes: Buffer): string[] => [
    '--b1', `Content-Type: image/png; name="${name}"`, `Content-ID: <${cid}>`, 'Content-Disposition: inline',
    'Content-Transfer-Encoding: base64', '',
    bytes.toString('base64').replace(/(.{76})/g, '$1\r\n')
  ]
  const raw = [
    'From: app@example.com', 'To: ann@example.net', 'Subject: Logo', 'MIME-Version: 1.0',
    'Content-Type: multipart/related; boundary="b1"', '',
    '--b1', 'Content-Type: text/html; charset=utf-8', '', '<img src="cid:logo@shop">',
    ...part('logo.png', 'logo@shop', small), ...part('big.png', 'big@shop', large), '--b1--', ''
  ].join('\r\n')
  const c = await contentView({ ...base, html: undefined, submitted: { raw: Buffer.from(raw).toString('latin1') } })
  assert.deepEqual(c.attachments.map((a) => [a.content_id, a.size, a.data]), [
    ['logo@shop', small.length, small.toString('base64')], ['big@shop', large.length, undefined]
  ])
})
