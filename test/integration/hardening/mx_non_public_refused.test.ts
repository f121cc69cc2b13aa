import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'
import { suppressionKey } from '../../../stores/control_plane/mod.ts'

// A recipient domain's DNS is whoever owns the domain: its MX (or, without one, its A record) may point at the
// engine's own host or network. The sink listens on 127.0.0.1 at the MX port, where such mail would arrive.
let sink: SmtpSink
let dns: DnsServer
let guarded: TestOutbox
let allowing: TestOutbox
let org: TestOrg
let events: EventWatcher

before(async () => {
  sink = await SmtpSink.start()
  dns = await DnsServer.start({
    MX: {
      'loopback-mx.example': [{ exchange: 'mx.loopback-mx.example', priority: 10 }],
      'private-mx.example': [{ exchange: 'mx.private-mx.example', priority: 10 }],
      'localhost-mx.example': [{ exchange: 'localhost', priority: 10 }],
      // one public-looking host that does not exist and one internal one: the internal one is not a fallback
      'mixed-mx.example': [{ exchange: 'gone.mixed-mx.example', priority: 5 }, { exchange: 'mx.mixed-mx.example', priority: 10 }]
    },
    A: {
      'mx.loopback-mx.example': ['127.0.0.1'],
      'mx.private-mx.example': ['10.20.30.40'],
      'mx.mixed-mx.example': ['93.184.216.34', '169.254.169.254'],
      'implicit-loopback.example': ['127.0.0.1'],
      localhost: ['127.0.0.1']
    }
  })
  const env = { OB_DNS_SERVERS: dns.address, OB_SMTP_OUTBOUND_PORT: String(sink.port), OB_ROLE: 'engine', OB_DELIVERY_RETRY_SCHEDULE: '1' }
  guarded = await TestOutbox.start({ env })
  org = await guarded.org()
  events = await EventWatcher.start(guarded.proc.nc, org.orgId)
  allowing = await TestOutbox.start({ env: { ...env, OB_SMTP_ALLOW_PRIVATE: 'true' } })
})
after(async () => {
  events.stop()
  await guarded.close()
  await allowing.close()
  await sink.close()
  await dns.close()
})

test('mail for a domain whose mail hosts are loopback, private, link-local or localhost bounces (domain) without suppressing', async () => {
  const rcpts = [
    'a@loopback-mx.example', 'b@private-mx.example', 'c@localhost-mx.example', 'd@implicit-loopback.example', 'e@mixed-mx.example'
  ]
  const msgs = rcpts.map((to) => queuedMessage(org, { to: [to] }))
  // control: a domain that does not exist is a domain bounce too, and that one suppresses
  const control = queuedMessage(org, { to: ['f@nowhere.example'] })
  for (const m of [...msgs, control]) await publishQueued(guarded.proc.nc, guarded.proc.config, m)
  await events.until(() => [...msgs, control].every((m) => events.of(m.id).length > 0), 60_000)
  for (const [i, m] of msgs.entries()) {
    assert.deepEqual(events.of(m.id).map((e) => e.type), ['bounced'], `${rcpts[i]!}: bounced at once, not delivered, deferred or retried`)
    const d = events.of(m.id, 'bounced')[0]!.data
    assert.equal(d.bounce_type, 'hard', rcpts[i])
    assert.equal(d.bounce_code, '550', rcpts[i])
    assert.equal(d.bounce_category, 'domain', rcpts[i])
    assert.match(String(d.bounce_message), /^5\.4\.4 mail host \S+ of \S+ is at (127\.0\.0\.1|10\.20\.30\.40|loopback|169\.254\.169\.254), not a public address/, rcpts[i])
    assert.equal(guarded.proc.cp.isSuppressed(org.orgId, rcpts[i]!), false, `${rcpts[i]!} is not suppressed`)
  }
  assert.equal(guarded.proc.cp.suppressions.get(suppressionKey(org.orgId, 'f@nowhere.example'))?.reason, 'hard_bounce')
  assert.equal(sink.connections, 0, 'no SMTP session was opened with the internal server')
  assert.equal(sink.accepted, 0)
})

test('with OB_SMTP_ALLOW_PRIVATE the same mail hosts are delivered to', async () => {
  const other = await allowing.org()
  const watcher = await EventWatcher.start(allowing.proc.nc, other.orgId)
  try {
    const msgs = ['a@loopback-mx.example', 'd@implicit-loopback.example'].map((to) => queuedMessage(other, { to: [to] }))
    for (const m of msgs) await publishQueued(allowing.proc.nc, allowing.proc.config, m)
    await watcher.until(() => msgs.every((m) => watcher.of(m.id, 'delivered').length === 1), 60_000)
    assert.equal(sink.to('a@loopback-mx.example').length, 1)
    assert.equal(sink.to('d@implicit-loopback.example').length, 1)
  } finally {
    watcher.stop()
  }
})
