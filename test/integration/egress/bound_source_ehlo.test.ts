import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { classifyError } from '../../../engine/actor/classify.ts'
import { TransportCache, type Destination, type RawMail } from '../../../engine/actor/transports.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'

// One SMTP sink on 127.0.0.1; the connections come from the address their pool is bound to (all of 127/8 is this
// machine's loopback) and say the pool's EHLO name.
let sink: SmtpSink
let transports: TransportCache

function mail (to: string): RawMail {
  const messageId = `<${Math.random().toString(36).slice(2)}@outbox.test>`
  const raw = Buffer.from(`From: sender@outbox.test\r\nTo: ${to}\r\nSubject: source\r\nMessage-ID: ${messageId}\r\n\r\nHello\r\n`)
  return { envelope: { from: 'sender@outbox.test', to: [to] }, raw, messageId }
}

before(async () => {
  sink = await SmtpSink.start({ slowMs: 400 })
  transports = new TransportCache(5)
})
after(async () => {
  transports.close()
  await sink.close()
})

test('a destination bound to 127.0.0.2 reaches the server from 127.0.0.2 and says its own EHLO name', async () => {
  const mx: Destination = { host: 'mx.example.test', connectTo: '127.0.0.1', port: sink.port, secure: false }
  await transports.get({ ...mx, localAddress: '127.0.0.2', ehlo: 'mta2.example.test', family: 4 }).sendMail(mail('bound@example.test'))
  await transports.get(mx).sendMail(mail('host@example.test'))
  const [bound] = sink.to('bound@example.test')
  assert.equal(bound?.remoteAddress, '127.0.0.2')
  assert.equal(bound?.ehlo, 'mta2.example.test')
  const [host] = sink.to('host@example.test')
  assert.equal(host?.remoteAddress, '127.0.0.1', 'the host source binds nothing: the route picks 127.0.0.1')
  assert.notEqual(host?.ehlo, 'mta2.example.test')
  assert.equal(sink.connectionsByAddress.get('127.0.0.2'), 1)
  assert.equal(sink.connectionsByAddress.get('127.0.0.1'), 1)
})

test('a pool with its own connection limit never has more connections open at once', async () => {
  const capped: Destination = {
    host: 'mx.example.test', connectTo: '127.0.0.1', port: sink.port, secure: false, localAddress: '127.0.0.3', maxConnections: 2
  }
  const pool = transports.get(capped)
  // slow…: the sink answers DATA after 400 ms, so six messages at once would want six connections
  await Promise.all(Array.from({ length: 6 }, async (_, i) => await pool.sendMail(mail(`slow${i}@example.test`))))
  assert.equal(sink.to('slow5@example.test')[0]?.remoteAddress, '127.0.0.3')
  assert.equal(sink.peakOpenByAddress.get('127.0.0.3'), 2)
})

test('a local address this host does not have fails the attempt with EADDRNOTAVAIL, which is deferred', async () => {
  const before = sink.connections
  const unbound: Destination = {
    host: 'mx.example.test', connectTo: '127.0.0.1', port: sink.port, secure: false, localAddress: '192.0.2.25', ehlo: 'gone.example.test'
  }
  const err = await transports.get(unbound).sendMail(mail('never@example.test')).then(() => undefined, (e: unknown) => e as Error)
  assert.ok(err !== undefined, 'the send failed')
  assert.equal((err as Error & { originalCode?: string }).originalCode, 'EADDRNOTAVAIL')
  assert.deepEqual(classifyError(err), { kind: 'deferred', response: 'ESOCKET: bind EADDRNOTAVAIL 192.0.2.25' })
  assert.equal(sink.connections, before, 'no connection reached the server')
})
