import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { MxResolver } from '../../../engine/actor/mx.ts'
import { TransportCache } from '../../../engine/actor/transports.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'

// An IPv6 source (bound to ::1) sends to a domain whose only MX host has an AAAA record and no A record: the MX path
// resolves it over AAAA and the connection arrives from ::1.
let sink: SmtpSink
let dns: DnsServer
let transports: TransportCache

before(async () => {
  sink = await SmtpSink.start({ host: '::1' })
  dns = await DnsServer.start({
    MX: { 'v6.example': [{ exchange: 'mx.v6.example', priority: 10 }] },
    AAAA: { 'mx.v6.example': ['::1'] }
  })
  transports = new TransportCache(2)
})
after(async () => {
  transports.close()
  await sink.close()
  await dns.close()
})

test('an IPv6 source delivers to an AAAA-only MX host, from its own address', async () => {
  const mx = new MxResolver([dns.address], true)
  const hosts = await mx.route('v6.example', 6)
  assert.deepEqual(hosts, [{ host: 'mx.v6.example', ip: '::1', family: 6 }])
  const h = hosts[0]!
  const raw = Buffer.from('From: sender@outbox.test\r\nTo: user@v6.example\r\nSubject: v6\r\nMessage-ID: <v6@outbox.test>\r\n\r\nHello\r\n')
  await transports.get({
    host: h.host, connectTo: h.ip, port: sink.port, secure: false, localAddress: '::1', ehlo: 'mta6.example.test', family: h.family
  }).sendMail({ envelope: { from: 'sender@outbox.test', to: ['user@v6.example'] }, raw, messageId: '<v6@outbox.test>' })
  const [got] = sink.to('user@v6.example')
  assert.equal(got?.remoteAddress, '::1')
  assert.equal(got?.ehlo, 'mta6.example.test')
  assert.equal(sink.connectionsByAddress.get('::1'), 1)
})
