import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { ServerProcess } from '../../helpers/servers.ts'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually } from '../../helpers/waiting.ts'
import {
  acceptedIds, acceptedSince, messageIdHeader, nothingPending, sendsFlow, startSendLoad, sinkCounts, untilDelivered,
  untilNothingPending, startRelayWorld, type RelayWorld
} from './fault_env.ts'

// Redis runs with appendonly yes (ServerProcess), as docs/reliability.md recommends.
let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let key: string

let world: RelayWorld
before(async () => { ({ nats, redis, sink, ob, org, key } = world = await startRelayWorld({ OB_ENGINE_ACK_WAIT_MS: '2000' })) })
after(async () => { await world.close() })

test('Redis SIGKILLed and restarted under load: 503 with Retry-After while down, nothing sent unthrottled, ' +
  'then everything flows', { timeout: 90_000 }, async (t) => {
  const load = startSendLoad(ob.baseUrl, key, org, 'r')
  const results = load.results
  let outage: typeof results = []
  try {
    await eventually(() => acceptedSince(results, 0) >= 8, 'sends accepted before the outage')
    await redis.stop('SIGKILL')
    const outageStart = results.length
    await eventually(() => results.slice(outageStart).some((r) => r.status === 503), 'a sender to see the outage')
    outage = results.slice(outageStart)
    await redis.start()
    await eventually(() => sendsFlow(results), 'sends to succeed again', 30_000, 250)
    const recovered = results.length
    await eventually(() => acceptedSince(results, recovered) >= 8, 'sends accepted after the recovery')
  } finally {
    await load.stop() // also when a wait failed, so the senders do not outlive the test
  }

  const statuses = new Map<number, number>()
  for (const r of results) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
  const slowest503 = Math.max(0, ...results.filter((r) => r.status === 503).map((r) => r.ms))
  t.diagnostic(`statuses ${JSON.stringify([...statuses])}; answers during the outage ${outage.length}; slowest 503 ${slowest503} ms`)
  for (const r of results) assert.ok(r.status === 202 || r.status === 503, `status ${r.status} ${r.error ?? ''}`)
  assert.ok(outage.some((r) => r.status === 503), 'senders saw the outage')
  for (const r of results.filter((x) => x.status === 503)) assert.ok(Number(r.retryAfter) >= 1, 'a 503 carries Retry-After')
  assert.equal(results.at(-1)!.status, 202, 'sending resumed')

  const ids = acceptedIds(results)
  await untilDelivered(sink, org, ids, 60_000)
  const state = await untilNothingPending(nats.url)
  assert.ok(nothingPending(state), JSON.stringify(state))
  // Nothing got through without the limiter: the sink holds exactly the messages that were answered 202.
  const delivered = new Set(sinkCounts(sink).keys())
  assert.deepEqual(delivered, new Set(ids.map((id) => messageIdHeader(org, id))))
})
