import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'

// Mail to a Google-hosted domain and to a site of its own, from an organisation assigned a pool of two sources bound
// to 127.0.0.2 and 127.0.0.3 (this machine has all of 127.0.0.0/8): each connection comes from a source's address and
// says its EHLO name, traffic splits by weight, and the host's own address is never used.
let sink: SmtpSink
let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

before(async () => {
  sink = await SmtpSink.start({ keepRaw: false })
  dns = await DnsServer.start({
    MX: {
      'workspace.test': [{ exchange: 'aspmx.l.google.com', priority: 1 }, { exchange: 'alt1.aspmx.l.google.com', priority: 5 }],
      'small.test': [{ exchange: 'mx.small.test', priority: 10 }]
    },
    A: { 'aspmx.l.google.com': ['127.0.0.1'], 'alt1.aspmx.l.google.com': ['127.0.0.1'], 'mx.small.test': ['127.0.0.1'] }
  })
  ob = await TestOutbox.start({
    env: {
      OB_DNS_SERVERS: dns.address, OB_SMTP_OUTBOUND_PORT: String(sink.port), OB_SMTP_ALLOW_PRIVATE: 'true', OB_ROLE: 'engine',
      OB_DELIVERY_RETRY_SCHEDULE: '1'
    }
  })
  org = await ob.org()
  const egress = ob.proc.cp.egress
  await egress.addSource({ name: 'mta2', address: '127.0.0.2', ehlo: 'mta2.outbox.test' })
  await egress.addSource({ name: 'mta3', address: '127.0.0.3', ehlo: 'mta3.outbox.test' })
  await egress.putPool('bulk', [{ source: 'mta2', weight: 75 }, { source: 'mta3', weight: 25 }])
  await egress.assignOrg(org.orgId, 'bulk')
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await sink.close()
  await dns.close()
})

test('every connection comes from a source of the pool, says its EHLO name, and traffic splits by weight', async () => {
  const msgs = Array.from({ length: 80 }, (_v, i) => queuedMessage(org, { to: [`user${i}@${i % 2 === 0 ? 'workspace' : 'small'}.test`] }))
  for (const m of msgs) await publishQueued(ob.proc.nc, ob.proc.config, m)
  await events.until(() => msgs.every((m) => events.of(m.id, 'delivered').length === 1))
  const from = new Map<string, number>()
  for (const m of sink.messages) {
    const ehlo = m.remoteAddress === '127.0.0.2' ? 'mta2.outbox.test' : m.remoteAddress === '127.0.0.3' ? 'mta3.outbox.test' : undefined
    assert.ok(ehlo !== undefined, `a message came from ${m.remoteAddress}, not a source of the pool`)
    assert.equal(m.ehlo, ehlo, 'the source says its own EHLO name')
    from.set(m.remoteAddress, (from.get(m.remoteAddress) ?? 0) + 1)
  }
  assert.equal(sink.messages.length, 80)
  const share = (from.get('127.0.0.2') ?? 0) / 80
  assert.ok(share > 0.5 && share < 0.95, `weight 75 of 100 sent ${Math.round(share * 100)} % (expected about 75 %)`)
  // Google requires TLS by default: its mail went over STARTTLS
  const google = msgs.filter((_m, i) => i % 2 === 0).flatMap((m) => sink.to(m.to[0]!))
  assert.equal(google.length, 40)
  assert.ok(google.every((m) => m.secure), 'mail to Google went over STARTTLS')
})
