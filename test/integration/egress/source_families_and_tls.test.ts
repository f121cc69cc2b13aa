import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'
import { nothingHappensFor } from '../../helpers/waiting.ts'

// Through a running engine: a pool of an IPv6 source (::1) and an IPv4 one (127.0.0.2) sends to an AAAA-only MX from
// the IPv6 source and to an A-only MX from the IPv4 one; and a provider whose limits require TLS gets no mail from a
// server that does not offer STARTTLS (deferred), while a site of its own (opportunistic TLS) does.
let v4: SmtpSink
let v6: SmtpSink
let plain: SmtpSink
let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

before(async () => {
  v4 = await SmtpSink.start({ keepRaw: false })
  v6 = await SmtpSink.start({ keepRaw: false, host: '::1', port: v4.port })
  // the same port on another loopback address, without STARTTLS
  plain = await SmtpSink.start({ keepRaw: false, host: '127.0.0.9', port: v4.port, noStartTls: true })
  dns = await DnsServer.start({
    MX: {
      'v6.test': [{ exchange: 'mx.v6.test', priority: 10 }],
      'v4.test': [{ exchange: 'mx.v4.test', priority: 10 }],
      'notls-google.test': [{ exchange: 'aspmx.l.google.com', priority: 1 }],
      'notls-site.test': [{ exchange: 'mx.notls-site.test', priority: 1 }]
    },
    A: { 'mx.v4.test': ['127.0.0.1'], 'aspmx.l.google.com': ['127.0.0.9'], 'mx.notls-site.test': ['127.0.0.9'] },
    AAAA: { 'mx.v6.test': ['::1'] }
  })
  ob = await TestOutbox.start({
    env: {
      OB_DNS_SERVERS: dns.address, OB_SMTP_OUTBOUND_PORT: String(v4.port), OB_SMTP_ALLOW_PRIVATE: 'true', OB_ROLE: 'engine',
      OB_DELIVERY_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1'
    }
  })
  org = await ob.org()
  await ob.proc.cp.egress.addSource({ name: 'six', address: '::1', ehlo: 'six.outbox.test' })
  await ob.proc.cp.egress.addSource({ name: 'four', address: '127.0.0.2', ehlo: 'four.outbox.test' })
  await ob.proc.cp.egress.putPool('mixed', [{ source: 'six', weight: 100 }, { source: 'four', weight: 100 }])
  await ob.proc.cp.egress.assignOrg(org.orgId, 'mixed')
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await v4.close()
  await v6.close()
  await plain.close()
  await dns.close()
})

test('an IPv6 source takes the AAAA-only host, an IPv4 source the A-only host, each saying its own EHLO name', async () => {
  const msgs = Array.from({ length: 12 }, (_v, i) => queuedMessage(org, { to: [`user${i}@${i % 2 === 0 ? 'v6' : 'v4'}.test`] }))
  for (const m of msgs) await publishQueued(ob.proc.nc, ob.proc.config, m)
  await events.until(() => msgs.every((m) => events.of(m.id, 'delivered').length === 1))
  assert.equal(v6.messages.length, 6)
  assert.ok(v6.messages.every((m) => m.remoteAddress === '::1' && m.ehlo === 'six.outbox.test'))
  assert.equal(v4.messages.length, 6)
  assert.ok(v4.messages.every((m) => m.remoteAddress === '127.0.0.2' && m.ehlo === 'four.outbox.test'))
  assert.ok(msgs.every((m) => events.of(m.id).every((e) => e.type === 'delivered')), 'no recipient was deferred or bounced')
})

test('a provider that requires TLS gets nothing from a server without STARTTLS (deferred); a site of its own does', async () => {
  const google = queuedMessage(org, { to: ['user@notls-google.test'] })
  const site = queuedMessage(org, { to: ['user@notls-site.test'] })
  await publishQueued(ob.proc.nc, ob.proc.config, google)
  await publishQueued(ob.proc.nc, ob.proc.config, site)
  await events.until(() => events.of(site.id, 'delivered').length === 1 && events.of(google.id, 'deferred').length >= 1)
  assert.equal(plain.to('user@notls-site.test').length, 1)
  await nothingHappensFor(2000)
  assert.equal(plain.to('user@notls-google.test').length, 0, 'mail to Google went without TLS')
  assert.equal(events.of(google.id, 'bounced').length, 0)
})
