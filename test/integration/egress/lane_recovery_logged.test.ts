import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'
import { eventually } from '../../helpers/waiting.ts'
import { sleep } from './engine_clients.ts'
import { EGRESS_DNS } from './egress_cluster.ts'

// A lane slowed by Gmail's 421 4.7.28 recovers by itself; its return to full rate is one log line and one count of
// outbox_egress_lane_recoveries_total, as its slowing was (the engine recovers a lane every second here).
const GMAIL_421 = '4.7.28 [127.0.0.1] Our system has detected an unusual rate of unsolicited mail originating from your IP ' +
  'address. To protect our users from spam, mail sent from your IP address has been temporarily rate limited.'

let sink: SmtpSink
let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher
const logs: string[] = []
let refusals = 0

before(async () => {
  sink = await SmtpSink.start({
    keepRaw: false,
    rcptReply: (rcpt) => (rcpt === 'first@workspace.test' && refusals++ === 0 ? { code: 421, message: GMAIL_421 } : undefined)
  })
  dns = await DnsServer.start(EGRESS_DNS)
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  ob = await TestOutbox.start({
    log: { level: 'info', stream },
    env: {
      OB_DNS_SERVERS: dns.address, OB_SMTP_OUTBOUND_PORT: String(sink.port), OB_SMTP_ALLOW_PRIVATE: 'true',
      OB_EGRESS_RECOVER_EVERY_MS: '1000', OB_DELIVERY_RETRY_SCHEDULE: '1,1,1,1,1,600'
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

const lines = (msg: string): Array<Record<string, any>> => logs.flatMap((l) => l.split('\n')).filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Record<string, any>).filter((l) => l.msg === msg)

test('a lane\'s return to full rate is one log line and one count, like the reply that slowed it', async () => {
  const m = queuedMessage(org, { to: ['first@workspace.test'], track_opens: false, track_clicks: false })
  await publishQueued(ob.proc.nc, ob.proc.config, m)
  await events.until(() => events.of(m.id, 'delivered').length === 1, 30_000)
  assert.deepEqual(events.of(m.id).map((e) => e.type), ['deferred', 'delivered'])
  const slowed = lines('egress lane throttled by a reply')
  assert.equal(slowed.length, 1)
  assert.equal(slowed[0]!.rate_factor, 0.5)

  const back = await eventually(() => {
    const found = lines('egress lane back at full rate')
    return found.length > 0 ? found : undefined
  }, 'the recovery line', 20_000)
  assert.deepEqual({ source: back[0]!.source, provider: back[0]!.provider, rate_factor: back[0]!.rate_factor },
    { source: 'host', provider: 'google', rate_factor: 1 })
  // more mail on the lane reads it again: the step was claimed once and is not logged again
  const more = Array.from({ length: 3 }, (_v, i) => queuedMessage(org, { to: [`more${i}@workspace.test`] }))
  for (const x of more) await publishQueued(ob.proc.nc, ob.proc.config, x)
  await events.until(() => more.every((x) => events.of(x.id, 'delivered').length === 1), 30_000)
  await sleep(500)
  assert.equal(lines('egress lane back at full rate').length, 1)
  assert.equal(lines('egress lane recovering: rate doubled').length, 0, 'a lane halved once is whole after one step')
  const text = (await ob.request('GET', '/metrics')).text
  assert.match(text, /^outbox_egress_lane_recoveries_total\{step="full"\} 1$/m)
  assert.match(text, /^outbox_egress_lane_recoveries_total\{step="doubled"\} 0$/m)
  assert.match(text, /^outbox_egress_lane_changes_total\{action="slow"\} 1$/m)
})
