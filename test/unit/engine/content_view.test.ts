import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { base64Size, contentView } from '../../../engine/content_view.ts'
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
