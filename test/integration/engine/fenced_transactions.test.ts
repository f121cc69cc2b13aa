import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually } from '../../helpers/waiting.ts'
import { TransportCache, type Destination, type RawMail } from '../../../engine/actor/transports.ts'
import { FencedSends } from '../../../engine/actor/fenced_sends.ts'
import { ShardFences } from '../../../engine/leases/fences.ts'

/**
 * A shard thread's transactions held to the shard's lease (engine/actor/fenced_sends.ts), against a real SMTP server:
 * none starts on a closed fence; one that stays in flight with its fence closed, on a pool that answers nothing, is
 * taken for stalled and reset rather than left to finish whenever its link or its server answers; one that finishes
 * in time, or waits on a pool that goes on answering, is left alone. The
 * multi-host scenario (netns/engine_host_faults) shows the whole of it.
 */
const SLOW_MS = 8_000
const STALLED_MS = 1_000
let sink: SmtpSink

before(async () => { sink = await SmtpSink.start({ slowMs: SLOW_MS }) })
after(async () => { await sink.close() })

const mail = (to: string): RawMail => ({
  envelope: { from: 'app@example.test', to: [to] },
  raw: Buffer.from(`From: app@example.test\r\nTo: ${to}\r\nSubject: x\r\nMessage-ID: <${to}>\r\n\r\nHello\r\n`),
  messageId: `<${to}>`
})

test('a transaction whose shard fence closes while it is in flight is reset; the next one opens a new connection', async () => {
  const fences = new ShardFences(2)
  fences.openUntil(0, Date.now() + 60_000)
  fences.openUntil(1, Date.now() + 60_000)
  const transports = new TransportCache(2)
  const sends = new FencedSends(fences.buffer, transports, STALLED_MS)
  const dest: Destination = { host: 'sink.test', connectTo: sink.host, port: sink.port, secure: false }
  try {
    // the sink answers DATA for slow… only after 8 s, and records the message only then: in flight until that
    const stalled = sends.send(transports.get(dest), mail('slow1@dest.test'), 0)
    await eventually(() => sink.connections > 0, 'the connection')
    await new Promise((resolve) => setTimeout(resolve, 500)) // the message's data on its way (the send fails either way)
    fences.close(0)
    const err = await stalled.then(() => undefined, (e: unknown) => e as Error & { code?: string })
    assert.ok(err !== undefined, 'the send failed instead of finishing')
    assert.equal(sink.to('slow1@dest.test').length, 0, 'at once, not when the server answered')
    assert.ok(!sends.mayStart(0), 'and no transaction for the shard may start')

    assert.ok(sends.mayStart(1), 'another shard sends on')
    const opened = sink.connections
    const info = await sends.send(transports.get(dest), mail('user1@dest.test'), 1)
    assert.match(String(info.response), /^250/)
    assert.equal(sink.to('user1@dest.test').length, 1)
    assert.equal(sink.connections, opened + 1, 'on a new connection: the reset one is not reused')
  } finally {
    sends.close()
    transports.close()
  }
})

test('a transaction that finishes soon after its fence closed is left to finish, and its reply counts', async () => {
  const quick = await SmtpSink.start({ slowMs: 1500 })
  const fences = new ShardFences(1)
  fences.openUntil(0, Date.now() + 60_000)
  const transports = new TransportCache(1)
  const sends = new FencedSends(fences.buffer, transports, 5_000)
  try {
    const dest: Destination = { host: 'quick.test', connectTo: quick.host, port: quick.port, secure: false }
    const sending = sends.send(transports.get(dest), mail('slow2@dest.test'), 0)
    await eventually(() => quick.connections > 0, 'the connection')
    fences.close(0)
    const info = await sending
    assert.match(String(info.response), /^250/, 'the receiver\'s reply is kept: resetting now could lose it')
    assert.ok(!sends.mayStart(0))
  } finally {
    sends.close()
    transports.close()
    await quick.close()
  }
})

test('a pool that goes on answering is not reset when its shard\'s fence closes, however long a message waited in it for ' +
  'a connection', async () => {
  // one connection, each transaction answered after 500 ms: the sixth waits 2.5 s, past the 1 s taken for stalled
  const paced = await SmtpSink.start({ slowMs: 500 })
  const fences = new ShardFences(1)
  fences.openUntil(0, Date.now() + 60_000)
  const transports = new TransportCache(1)
  const sends = new FencedSends(fences.buffer, transports, STALLED_MS)
  try {
    const dest: Destination = { host: 'paced.test', connectTo: paced.host, port: paced.port, secure: false }
    const to = Array.from({ length: 6 }, (_, i) => `slow-paced${i}@dest.test`)
    const sending = Promise.allSettled(to.map(async (rcpt) => await sends.send(transports.get(dest), mail(rcpt), 0)))
    await eventually(() => paced.connections > 0, 'the connection')
    // as on a healthy engine whose lease renewals wait on NATS for a while
    fences.close(0)
    const outcomes = await sending
    assert.deepEqual(outcomes.map((o) => o.status), to.map(() => 'fulfilled'), 'every transaction finished')
    for (const rcpt of to) assert.equal(paced.to(rcpt).length, 1, `${rcpt} received once`)
    assert.equal(paced.connections, 1, 'on the one connection: it was not reset')
  } finally {
    sends.close()
    transports.close()
    await paced.close()
  }
})

test('without fences every transaction may start', () => {
  const transports = new TransportCache(1)
  const sends = new FencedSends(undefined, transports)
  assert.ok(sends.mayStart(0))
  sends.close()
  transports.close()
})
