import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  CONTENT_INLINE_MAX_BYTES, ContentMismatchError, inlineLimit, isQueuedMessage, joinContent, newId, splitContent, type QueuedMessage
} from '../../protocol/mod.ts'

function message (extra: Partial<QueuedMessage> = {}): QueuedMessage {
  return {
    v: 1,
    id: newId('msg'),
    org_id: newId('org'),
    domain_id: newId('dom'),
    key_id: newId('key'),
    environment: 'live',
    from: 'a@example.com',
    to: ['b@example.net'],
    cc: [],
    bcc: [],
    subject: 'Hi',
    html: '<p>Hi</p>',
    text: 'Hi',
    headers: {},
    metadata: { k: 'v' },
    attachments: [{ filename: 'a.bin', content: Buffer.alloc(1000, 7).toString('base64'), content_type: 'application/octet-stream' }],
    track_opens: false,
    track_clicks: false,
    suppressed: [],
    created_at: new Date().toISOString(),
    ...extra
  }
}

test('the inline limit is half of max_payload, at most 512 KB', () => {
  assert.equal(inlineLimit(1024 * 1024), 512 * 1024)
  assert.equal(inlineLimit(12 * 1024 * 1024), CONTENT_INLINE_MAX_BYTES)
  assert.equal(inlineLimit(256 * 1024), 128 * 1024)
})

test('a split message is a valid queued message without its content, and joins back to the original', () => {
  for (const msg of [
    message(),
    message({ html: undefined, text: undefined, attachments: [], submitted: { raw: 'Subject: x\r\n\r\nbody\r\n' }, tags: ['t'] })
  ]) {
    if (msg.html === undefined) { delete msg.html; delete msg.text }
    const split = splitContent(msg)
    const queued = JSON.parse(split.message.toString()) as QueuedMessage
    assert.ok(isQueuedMessage(queued))
    assert.equal(queued.html, undefined)
    assert.equal(queued.text, undefined)
    assert.equal(queued.submitted, undefined)
    assert.deepEqual(queued.attachments, [])
    assert.equal(queued.content_ref!.size, split.content.length)
    const joined = joinContent(queued, split.content)
    assert.ok(isQueuedMessage(joined))
    const { content_ref: _ref, ...rest } = joined as QueuedMessage
    assert.deepEqual(rest, msg)
  }
})

test('content that does not match its reference is refused, by code', () => {
  const split = splitContent(message())
  const queued = JSON.parse(split.message.toString()) as QueuedMessage
  const changed = Buffer.from(split.content)
  changed[changed.length - 3] = changed[changed.length - 3]! ^ 1
  assert.throws(() => joinContent(queued, changed),
    (err: unknown) => err instanceof ContentMismatchError && err.code === 'content_mismatch')
  assert.throws(() => joinContent(queued, split.content.subarray(1)), ContentMismatchError)
})

test('a queued message with neither content nor reference is refused', () => {
  const msg = message()
  delete msg.html
  delete msg.text
  assert.equal(isQueuedMessage(msg), false)
})
