import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { EventWatcher } from '../../helpers/engine_env.ts'
import { putWebhook, webhookNow } from '../../helpers/webhooks.ts'
import { acceptedIds, closeAgent, nothingPending, sendMany, untilNothingPending } from './fault_env.ts'
import { eventually } from '../../helpers/waiting.ts'

const COUNT = 30

let nats: ServerProcess
let redis: ServerProcess
let rx: HttpsReceiver
let ob: TestOutbox
let org: TestOrg
let key: string
let events: EventWatcher

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  rx = await HttpsReceiver.start()
  ob = await TestOutbox.start({
    nats, redis,
    env: {
      OB_ROLE: 'all', OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1',
      OB_WEBHOOK_TIMEOUT_MS: '2000'
    }
  })
  org = await ob.org()
  key = await ob.key(org, ['send'], 'test') // sandbox: SMTP is not the point here
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await closeAgent()
  await rx.close()
  await nats.dispose()
  await redis.dispose()
})

test('receiver down through several retries, then back: every event arrives, with its own id, ' +
  'none lost', { timeout: 60_000 }, async (t) => {
  const wh = await putWebhook(ob, org, { url: rx.url('/hook'), events: ['delivered'] })
  const port = rx.port
  await rx.close() // connection refused from now on
  const results = await sendMany(ob.baseUrl, key, org, COUNT, (i) => `w${i}@dest.example`)
  const ids = acceptedIds(results)
  assert.equal(ids.length, COUNT)
  await events.until(() => ids.every((id) => events.of(id, 'delivered').length === 1), 20_000)
  // three retries meet the closed port: the delivery log holds a fourth attempt
  const attempts = async (): Promise<Array<{ attempt: number }>> =>
    (await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key: org.adminKey })).body.data
  await eventually(async () => (await attempts()).some((a) => a.attempt >= 4), 'a fourth attempt at the closed port', 30_000, 100)
  assert.equal(webhookNow(ob, wh)?.status, 'active', 'the schedule is not spent yet')
  rx = await HttpsReceiver.start(undefined, port)

  const want = new Map(ids.map((id) => [events.of(id, 'delivered')[0]!.id, id]))
  const bodies = (): Array<{ id: string }> => rx.on('/hook').map((r) => JSON.parse(r.rawBody.toString()) as { id: string })
  await eventually(() => [...want.keys()].every((id) => bodies().some((b) => b.id === id)), 'every event at the receiver', 30_000, 100)
  const got = bodies()
  const seen = new Set(got.map((b) => b.id))
  t.diagnostic(`events ${want.size}, requests after the receiver came back ${got.length}`)
  for (const id of want.keys()) assert.ok(seen.has(id), `event ${id} delivered to the receiver`)
  for (const id of seen) assert.ok(want.has(id), 'the receiver got only the events of these messages')
  // A repeat is allowed only as the same event (same id): the set of ids is the set of events.
  assert.equal(seen.size, want.size)
  const state = await untilNothingPending(nats.url)
  assert.ok(nothingPending(state), JSON.stringify(state))
})
