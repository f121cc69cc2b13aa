import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { EventWatcher } from '../../helpers/engine_env.ts'
import {
  acceptedIds, closeAgent, killChild, messageIdHeader, nothingPending, sendMany, sinkCounts, startEngineChild,
  untilDelivered, untilNothingPending
} from './fault_env.ts'

const COUNT = 240
const KILLS = 3

let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let key: string
let events: EventWatcher
let engine: ChildProcess | undefined

const engineEnv = (): Record<string, string> => ({ NATS_URL: nats.url, REDIS_URL: redis.url, OB_SMTP_RELAY: sink.url })

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start({ keepRaw: false })
  ob = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway' } })
  org = await ob.org()
  key = await ob.key(org, ['send'])
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  if (engine !== undefined) await killChild(engine)
  await ob.close()
  await closeAgent()
  await sink.close()
  await nats.dispose()
  await redis.dispose()
})

test('three SIGKILLs of the engine during one run: every 202 is delivered, one event per outcome, ' +
  'nothing left pending', { timeout: 90_000 }, async (t) => {
  engine = await startEngineChild(engineEnv())
  const sending = sendMany(ob.baseUrl, key, org, COUNT, (i) => `r${i}@dest.example`, 4, 5)
  const cutShort = new Set<string>()
  for (let k = 1; k <= KILLS; k++) {
    await sink.until(() => sink.accepted >= k * Math.floor(COUNT / (KILLS + 2)), 30_000)
    await killChild(engine)
    for (const id of sinkCounts(sink).keys()) cutShort.add(id) // anything accepted so far may be sent again
    engine = await startEngineChild(engineEnv())
  }
  const results = await sending
  assert.deepEqual([...new Set(results.map((r) => r.status))], [202], 'the gateway is not affected by engine crashes')
  const ids = acceptedIds(results)
  assert.equal(ids.length, COUNT)

  await untilDelivered(sink, org, ids, 60_000)
  const counts = sinkCounts(sink)
  const duplicated = [...counts].filter(([, n]) => n > 1).map(([id]) => id)
  t.diagnostic(`accepted ${ids.length}, SMTP transactions ${sink.messages.length}, duplicated ${duplicated.length}`)
  for (const id of ids) assert.ok((counts.get(messageIdHeader(org, id)) ?? 0) >= 1, `${id} reached the sink`)
  for (const id of duplicated) assert.ok(cutShort.has(id), `${id} was sent twice though no kill happened after its first transaction`)

  await events.until(() => ids.every((id) => events.of(id, 'delivered').length >= 1), 30_000)
  for (const id of ids) assert.equal(events.of(id, 'delivered').length, 1, `one delivered event for ${id}`)
  const state = await untilNothingPending(nats.url)
  assert.ok(nothingPending(state), JSON.stringify(state))
  await killChild(engine, 'SIGTERM')
})
