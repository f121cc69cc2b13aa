import { test } from 'node:test'
import assert from 'node:assert/strict'
import { inboundPayload, unprocessedPayload } from '../../../inbound/event_payload.ts'
import type { MessageAnalysis } from '../../../inbound/analysis.ts'
import type { InboundJob } from '../../../protocol/mod.ts'
import type { RouteRecord } from '../../../protocol/mod.ts'

const MAX = 64 * 1024
const job: InboundJob = {
  id: 'msg_01jd0000000000000000000000', received_at: new Date(0).toISOString(), mail_from: '', rcpt_to: [], remote_ip: '127.0.0.1',
  helo: '', size: 123
}
const route = (include: boolean): RouteRecord => ({
  id: 'rt_01jd0000000000000000000000', org_id: 'org_x', match: '*@x.test', action: { type: 'webhook', include_attachments: include },
  created_at: ''
})

function message (over: Partial<MessageAnalysis>): MessageAnalysis {
  return { from: 'a@b.test', subject: 's', text: 't', html: '', headers: { subject: 's' }, attachments: [], ...over }
}

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v))

test('a message within the limit is carried whole, without truncated or raw', () => {
  const { data, cut } = inboundPayload(message({ text: 'hello' }), job, route(true), ['a@x.test'], MAX)
  assert.equal(cut, false)
  assert.equal(data.text, 'hello')
  assert.equal(data.truncated, undefined)
  assert.equal(data.raw, undefined)
})

test('whatever part of a message is large, the event stays within the limit and points at the whole', () => {
  const big = 'é"\\\u{1F600}'.repeat(100_000)
  const shapes: Array<[string, Partial<MessageAnalysis>, string[]]> = [
    ['text', { text: big }, ['a@x.test']],
    ['html and text', { text: big, html: big }, ['a@x.test']],
    ['one huge header', { headers: { 'x-big': big } }, ['a@x.test']],
    ['many headers', { headers: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`x-h${i}`, 'v'.repeat(50)])) }, ['a@x.test']],
    ['many attachments', {
      attachments: Array.from({ length: 20_000 }, (_, i) => ({ filename: `f${i}.bin`, content_type: 'application/octet-stream', size: 1 }))
    }, ['a@x.test']],
    ['attachment contents', {
      attachments: [{ filename: 'a.pdf', content_type: 'application/pdf', size: 1e6, content: 'QUJD'.repeat(300_000) }]
    }, ['a@x.test']],
    ['subject and from', { subject: big, from: big }, ['a@x.test']],
    ['many recipients', {}, Array.from({ length: 100 }, (_, i) => `${'r'.repeat(200)}${i}@x.test`)]
  ]
  for (const max of [MAX, 8192]) {
    for (const [name, over, to] of shapes) {
      if (name === 'many recipients' && max === MAX) continue
      const { data, cut } = inboundPayload(message(over), job, route(true), to, max)
      assert.ok(bytes(data) <= max, `${name}: ${bytes(data)} bytes of ${max}`)
      assert.equal(cut, true, name)
      assert.deepEqual(data.raw, { url: `/v1/inbound/messages/${job.id}/raw`, size: 123 }, name)
      assert.doesNotThrow(() => JSON.parse(JSON.stringify(data)), name)
    }
  }
})

test('attachment contents go first: a message whose bodies fit keeps them whole', () => {
  const big = message({ text: 'keep me', attachments: [{ filename: 'a', content_type: 'x/y', size: 1, content: 'A'.repeat(100_000) }] })
  const { data, cut } = inboundPayload(big, job, route(true), ['a@x.test'], MAX)
  assert.equal(cut, true)
  assert.equal(data.text, 'keep me')
  assert.equal(data.truncated, undefined)
  assert.deepEqual(data.attachments, [{ filename: 'a', content_type: 'x/y', size: 1, content_omitted: true }])
})

test('a message that could not be processed: envelope, reason cut to 300 characters, raw only when it was kept', () => {
  const kept = unprocessedPayload(job, route(false), ['a@b.example'], 'x'.repeat(400))
  assert.equal(kept.processing_error!.length, 300)
  assert.deepEqual(kept.raw, { url: `/v1/inbound/messages/${job.id}/raw`, size: job.size })
  assert.equal(kept.text, '')
  const lost = unprocessedPayload(job, route(false), ['a@b.example'], 'unreadable', false)
  assert.equal(lost.raw, undefined)
  assert.equal(lost.from, job.mail_from)
})
