import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'

let sink: SmtpSink
let backup: SmtpSink
let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

before(async () => {
  sink = await SmtpSink.start()
  backup = await SmtpSink.start({ host: '127.0.0.2', port: sink.port }) // same port: MX delivery uses one port
  dns = await DnsServer.start({
    MX: {
      'mx-dest.example': [{ exchange: 'backup.mx-dest.example', priority: 20 }, { exchange: 'primary.mx-dest.example', priority: 10 }],
      'nullmx.example': [{ exchange: '', priority: 0 }],
      // the preferred host refuses connections (nothing listens on 127.0.0.3), the next one is the backup sink
      'failover.example': [{ exchange: 'down.failover.example', priority: 5 }, { exchange: 'up.failover.example', priority: 15 }]
    },
    A: {
      'primary.mx-dest.example': ['127.0.0.1'], 'backup.mx-dest.example': ['127.0.0.2'], 'implicit.example': ['127.0.0.1'],
      'down.failover.example': ['127.0.0.3'], 'up.failover.example': ['127.0.0.2']
    }
  })
  // the sinks stand in for MX hosts on this machine, which only an operator setting allows
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
  await backup.close()
  await dns.close()
})

test('mail goes to the most preferred MX host, resolved through OB_DNS_SERVERS', async () => {
  const msg = queuedMessage(org, { to: ['user@mx-dest.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  assert.equal(sink.to('user@mx-dest.example').length, 1)
  assert.equal(backup.to('user@mx-dest.example').length, 0, 'the less preferred host was not used')
})

test('when the preferred MX host does not answer, the next one is tried in the same attempt', async () => {
  const msg = queuedMessage(org, { to: ['user@failover.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  assert.deepEqual(events.of(msg.id).map((e) => e.type), ['delivered'])
  assert.equal(backup.to('user@failover.example').length, 1)
})

test('a domain without MX falls back to its own A record', async () => {
  const msg = queuedMessage(org, { to: ['user@implicit.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  assert.equal(sink.to('user@implicit.example').length, 1)
})

test('a domain that does not exist, or publishes a null MX, is a hard bounce', async () => {
  const a = queuedMessage(org, { to: ['user@nowhere.example'] })
  const b = queuedMessage(org, { to: ['user@nullmx.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, a)
  await publishQueued(ob.proc.nc, ob.proc.config, b)
  await events.until(() => events.of(a.id, 'bounced').length === 1 && events.of(b.id, 'bounced').length === 1)
  assert.equal(events.of(a.id, 'bounced')[0]!.data.bounce_code, '550')
  assert.equal(events.of(b.id, 'bounced')[0]!.data.bounce_code, '556')
  assert.equal(events.of(a.id, 'bounced')[0]!.data.bounce_type, 'hard')
})
