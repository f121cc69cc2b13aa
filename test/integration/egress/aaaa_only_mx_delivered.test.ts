import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'

// The default pool (no sources: the host's own address) delivers to a mail host that has only an AAAA record,
// over IPv6, instead of bouncing the recipient (and suppressing it) for having "no mail host".
let sink: SmtpSink
let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

before(async () => {
  sink = await SmtpSink.start({ host: '::1' })
  dns = await DnsServer.start({
    MX: { 'v6only.example': [{ exchange: 'mx.v6only.example', priority: 10 }] },
    AAAA: { 'mx.v6only.example': ['::1'], 'implicit-v6.example': ['::1'] }
  })
  // the sink stands in for an MX host on this machine, which only an operator setting allows
  ob = await TestOutbox.start({
    env: {
      OB_DNS_SERVERS: dns.address, OB_SMTP_OUTBOUND_PORT: String(sink.port), OB_SMTP_ALLOW_PRIVATE: 'true', OB_ROLE: 'engine',
      OB_DELIVERY_RETRY_SCHEDULE: '1'
    }
  })
  org = await ob.org()
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await sink.close()
  await dns.close()
})

test('mail to an MX host with only an AAAA record is delivered over IPv6, not bounced', async () => {
  const msg = queuedMessage(org, { to: ['user@v6only.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id).length > 0)
  assert.deepEqual(events.of(msg.id).map((e) => e.type), ['delivered'])
  const [got] = sink.to('user@v6only.example')
  assert.equal(got?.remoteAddress, '::1')
})

test('a domain without MX whose own name has only an AAAA record is delivered to as well', async () => {
  const msg = queuedMessage(org, { to: ['user@implicit-v6.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id).length > 0)
  assert.deepEqual(events.of(msg.id).map((e) => e.type), ['delivered'])
  assert.equal(sink.to('user@implicit-v6.example').length, 1)
})
