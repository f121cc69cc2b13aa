import { test } from 'node:test'
import assert from 'node:assert/strict'
import { encodeJob, decodeJob, type InboundJob } from '../../../protocol/mod.ts'
import { fitsInline } from '../../../inbound/raw_store.ts'
import { jsonSizeBound } from '../../../inbound/event_payload.ts'

const job: InboundJob = {
  id: 'msg_a', received_at: '2026-11-22T00:00:00.000Z', mail_from: 'a@sender.test', rcpt_to: ['b@ours.test'], remote_ip: '127.0.0.1',
  helo: 'sender.test', size: 0
}

test('a job without its message is plain JSON, as jobs stored by earlier versions are', () => {
  const data = encodeJob(job)
  assert.deepEqual(JSON.parse(Buffer.from(data).toString()), job)
  assert.deepEqual(decodeJob(data), { job })
})

test('a message carried inside its job comes back byte for byte, line feeds and binary included', () => {
  const raw = Buffer.concat([Buffer.from('Subject: hi\r\n\r\nline\nother\n\n'), Buffer.from([0, 10, 255, 13, 10])])
  const { job: back, raw: carried } = decodeJob(encodeJob({ ...job, helo: 'quote " and \\n' }, raw))
  assert.deepEqual(back, { ...job, helo: 'quote " and \\n' })
  assert.deepEqual(carried, raw)
})

test('an empty message still travels inside its job', () => {
  assert.deepEqual(decodeJob(encodeJob(job, new Uint8Array(0))).raw, Buffer.alloc(0))
})

test('only a message that leaves room for its job and headers travels inside it', () => {
  assert.equal(fitsInline(Buffer.alloc(1000), job, 64 * 1024), true)
  assert.equal(fitsInline(Buffer.alloc(64 * 1024 - 100), job, 64 * 1024), false)
  const many = { ...job, rcpt_to: Array.from({ length: 100 }, (_, i) => `recipient-number-${i}@a-rather-long-domain-name.example`) }
  assert.equal(fitsInline(Buffer.alloc(60 * 1024), job, 64 * 1024), true)
  assert.equal(fitsInline(Buffer.alloc(60 * 1024), many, 64 * 1024), false)
})

test('the JSON size bound is never below the real size', () => {
  const samples: unknown[] = [
    'plain', '', 'quote " backslash \\ newline \n tab \t', '\u0000\u0001\u001f control', 'é ü 漢字 😀 emoji',
    { a: 1, b: [1.5e300, -0.000001, null, true, false], 'ké\n': { nested: ['x', { y: 'z' }] } },
    { headers: { subject: 'Hi', received: 'from a\nfrom b' }, attachments: [{ filename: 'a.pdf', size: 22 }], undef: undefined }
  ]
  for (const v of samples) assert.ok(jsonSizeBound(v) >= Buffer.byteLength(JSON.stringify(v) ?? ''), JSON.stringify(v))
})
