import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventWatcher } from '../../helpers/engine_env.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { send, sendBody } from '../faults/fault_env.ts'
import { HOLD_RECHECK_MS } from '../../../protocol/mod.ts'
import { EGRESS_DNS } from './egress_cluster.ts'

/**
 * A provider hold through the egress layer: the provider is recognised from the MX hosts in the shard thread, which
 * holds the recipient before anything is counted against a lane. Google's recipients wait, unattempted, while mail to
 * a site goes; the provider's queue lists them; released, they are delivered.
 */
let sink: SmtpSink
let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let key: string
let opKey: string
let events: EventWatcher

before(async () => {
  sink = await SmtpSink.start()
  dns = await DnsServer.start(EGRESS_DNS)
  ob = await TestOutbox.start({
    env: { OB_DNS_SERVERS: dns.address, OB_SMTP_OUTBOUND_PORT: String(sink.port), OB_SMTP_ALLOW_PRIVATE: 'true' }
  })
  org = await ob.org()
  key = await ob.key(org, ['send'])
  opKey = (await ob.proc.cp.operatorKeys.create('ops')).value
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await sink.close()
  await dns.close()
})

const op = async (method: string, path: string, body?: unknown): ReturnType<TestOutbox['request']> =>
  await ob.request(method, `/v1/operator/queues${path}`, { key: opKey, ...(body !== undefined ? { body } : {}) })

test('a held provider\'s recipients wait unattempted while a site\'s mail goes; released, they are delivered', async () => {
  assert.equal((await op('POST', '/hold', { by: 'provider', value: 'google' })).status, 201)
  const r = await send(ob.baseUrl, key, sendBody(org, 'ann@workspace.test', { to: ['ann@workspace.test', 'sam@small.test'] }))
  assert.equal(r.status, 202, r.code)
  const id = r.id!
  await events.until(() => events.of(id, 'delivered').length === 1)
  assert.equal(sink.to('sam@small.test').length, 1)
  const q = await eventually(async () => {
    const res = await op('GET', '?by=provider')
    return (res.body.data as Array<{ value: string, recipients: number, held: boolean }>).find((x) => x.value === 'google')
  }, 'google listed')
  assert.equal(q.recipients, 1)
  assert.equal(q.held, true)
  // past one look of the hold (HOLD_RECHECK_MS), now from the provider the main thread recorded: still nothing sent
  await nothingHappensFor(HOLD_RECHECK_MS + 1500)
  assert.equal(sink.to('ann@workspace.test').length, 0)
  assert.equal(events.of(id, 'deferred').length, 0)

  assert.equal((await op('POST', '/release', { by: 'provider', value: 'google' })).status, 200)
  await events.until(() => events.of(id, 'delivered').length === 2)
  assert.equal(sink.to('ann@workspace.test').length, 1)
  assert.equal(events.of(id, 'deferred').length, 0)
})
