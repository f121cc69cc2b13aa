import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { EventWatcher } from '../../helpers/engine_env.ts'
import { freePort } from '../../helpers/ports.ts'
import {
  acceptedIds, closeAgent, messageIdHeader, nothingPending, sendMany, sinkCounts, untilDelivered, untilNothingPending
} from './fault_env.ts'

const COUNT = 60
// A recipient gives up by age once the schedule's whole span has passed: 2 minutes, far longer than the outage,
// however slowly a busy machine gets through the 60 sends and their first deferrals.
const RETRY_EVERY_SECOND = Array.from({ length: 120 }, () => '1').join(',')

let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink | undefined
let port: number
let ob: TestOutbox
let org: TestOrg
let key: string
let events: EventWatcher

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  port = await freePort()
  ob = await TestOutbox.start({
    nats, redis,
    env: { OB_ROLE: 'all', OB_SMTP_RELAY: `smtp://127.0.0.1:${port}`, OB_DELIVERY_RETRY_SCHEDULE: RETRY_EVERY_SECOND, OB_ENGINE_ACK_WAIT_MS: '2000' }
  })
  org = await ob.org()
  key = await ob.key(org, ['send'])
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await closeAgent()
  await sink?.close()
  await nats.dispose()
  await redis.dispose()
})

test('SMTP relay down, then back: messages are deferred or wait, then each delivered once; ' +
  'nothing lost or stuck', { timeout: 120_000 }, async (t) => {
  const results = await sendMany(ob.baseUrl, key, org, COUNT, (i) => `d${i}@dest.example`)
  const ids = acceptedIds(results)
  assert.equal(ids.length, COUNT)
  // The first failures suspend the destination: the other messages then wait for its end without an attempt (and
  // without a `deferred` event), so only some are deferred before the relay comes back.
  await events.until(() => ids.filter((id) => events.of(id, 'deferred').length >= 1).length >= 5, 20_000)
  // at least one retry also meets the closed port
  await events.until(() => ids.some((id) => events.of(id, 'deferred').length >= 2), 30_000)
  sink = await SmtpSink.start({ keepRaw: false, port })
  await untilDelivered(sink, org, ids, 40_000)

  const counts = sinkCounts(sink)
  for (const id of ids) assert.equal(counts.get(messageIdHeader(org, id)), 1, `${id} delivered exactly once`)
  await events.until(() => ids.every((id) => events.of(id, 'delivered').length === 1), 20_000)
  const deferrals = ids.map((id) => events.of(id, 'deferred'))
  t.diagnostic(`deferred events per message: min ${Math.min(...deferrals.map((d) => d.length))}, ` +
    `max ${Math.max(...deferrals.map((d) => d.length))}`)
  for (const d of deferrals) {
    // one event per attempt: the ids differ, and the attempt number grows
    assert.equal(new Set(d.map((e) => e.id)).size, d.length)
    const attempts = d.map((e) => Number((e.data as { attempt?: number }).attempt ?? 0))
    assert.deepEqual(attempts, [...attempts].sort((a, b) => a - b))
  }
  const all = events.events.map((e) => e.id)
  assert.equal(new Set(all).size, all.length, 'no event twice')
  const state = await untilNothingPending(nats.url)
  assert.ok(nothingPending(state), JSON.stringify(state))
})
