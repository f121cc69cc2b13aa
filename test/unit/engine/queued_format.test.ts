import { test } from 'node:test'
import assert from 'node:assert/strict'
import { QUEUED_FORMAT_VERSION, consumerTable, newId, queuedFormatOf, salvageQueued, type QueuedMessage } from '../../../protocol/mod.ts'
import { readQueued } from '../../../engine/queued_ingress.ts'
import { NEWER_FORMAT_LOG_EVERY_MS, NewerFormatHandback } from '../../../engine/processing/newer_format.ts'

const enc = new TextEncoder()

function message (extra: Record<string, unknown> = {}): Record<string, unknown> {
  const msg: QueuedMessage = {
    v: QUEUED_FORMAT_VERSION,
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
    text: 'Hi',
    headers: {},
    metadata: {},
    attachments: [],
    track_opens: false,
    track_clicks: false,
    suppressed: [],
    created_at: new Date().toISOString()
  }
  return { ...msg, ...extra }
}

const read = (value: unknown): ReturnType<typeof readQueued> => readQueued(enc.encode(JSON.stringify(value)))

test('the format is v, 1 without it, undefined when v is no whole number from 1', () => {
  assert.equal(queuedFormatOf({}), 1)
  assert.equal(queuedFormatOf({ v: 3 }), 3)
  for (const v of ['2', 0, -1, 1.5, null, [2]]) assert.equal(queuedFormatOf({ v }), undefined, JSON.stringify(v))
  for (const value of [null, [1], 'x', 2]) assert.equal(queuedFormatOf(value), undefined)
})

test('this build reads its own format and the first (no v), with fields it does not know kept as they are', () => {
  const own = read(message({ later: { a: [1] } }))
  assert.equal(own.kind, 'readable')
  assert.deepEqual((own as { msg: Record<string, unknown> }).msg.later, { a: [1] })
  const { v: _v, ...first } = message()
  assert.equal(read(first).kind, 'readable')
  assert.equal(read(message({ content_ref: { size: 3, sha256: 'a'.repeat(43), algo: 'next' }, text: undefined })).kind, 'readable')
})

test('a newer format is never read further, whatever it holds', () => {
  assert.deepEqual(read(message({ v: QUEUED_FORMAT_VERSION + 1 })), { kind: 'newer', format: QUEUED_FORMAT_VERSION + 1 })
  assert.deepEqual(read({ v: QUEUED_FORMAT_VERSION + 5, to: 'anything' }), { kind: 'newer', format: QUEUED_FORMAT_VERSION + 5 })
})

test('a broken message of a readable format is salvaged for its ending when it names its message, organisation and a recipient', () => {
  const msg = message({
    track_opens: 'yes', to: 'b@example.net', cc: ['not an address', 'c@example.net'], subject: 7, scheduled_at: 'soon'
  })
  const r = read(msg)
  assert.equal(r.kind, 'broken')
  if (r.kind !== 'broken') return
  assert.match(r.problem, /^\/\w+ /)
  const s = r.salvaged!
  assert.equal(s.id, msg.id)
  assert.equal(s.org_id, msg.org_id)
  assert.deepEqual([s.to, s.cc, s.bcc], [['b@example.net'], ['c@example.net'], []])
  assert.equal(s.track_opens, false)
  assert.equal(s.subject, '')
  assert.equal(s.scheduled_at, undefined)
  assert.equal(s.text, 'Hi')

  assert.equal(salvageQueued(message({ org_id: 'org_x', track_opens: 1 })), undefined)
  assert.equal(salvageQueued(message({ id: 5 })), undefined)
  assert.equal(salvageQueued(message({ to: [], track_opens: 1 })), undefined)
  assert.equal(readQueued(enc.encode('{')).kind, 'broken')
})

test('newer messages are handed back with the delay, each counted, the log at most once a minute with the count since', () => {
  let now = 1_000_000
  const lines: Array<Record<string, unknown>> = []
  let counted = 0
  const h = new NewerFormatHandback({
    delayMs: 60_000,
    now: () => now,
    counter: { inc: () => { counted++ } },
    log: { warn: (o: object) => { lines.push(o as Record<string, unknown>) } } as never
  })
  assert.deepEqual(h.handBack(2, 10), { kind: 'nak', delayMs: 60_000 })
  for (let i = 0; i < 500; i++) h.handBack(2, 11 + i)
  assert.equal(counted, 501)
  assert.equal(lines.length, 1)
  assert.equal(lines[0]!.handed_back, 1)
  now += NEWER_FORMAT_LOG_EVERY_MS
  h.handBack(3, 600)
  assert.equal(lines.length, 2)
  assert.deepEqual([lines[1]!.format, lines[1]!.handed_back, lines[1]!.readable_format], [3, 501, QUEUED_FORMAT_VERSION])
})

test('outbound consumers deliver without limit, so no number of hand-backs drops a message', () => {
  const outbound = consumerTable({ shards: 2, ackWaitMs: 30_000, webhookTimeoutMs: 10_000 } as never).filter((c) => c.part === 'delivery')
  assert.equal(outbound.length, 2)
  for (const c of outbound) assert.equal(c.config.max_deliver, -1)
})
