import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { ServerProcess } from '../../helpers/servers.ts'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { EventWatcher } from '../../helpers/engine_env.ts'
import { eventually } from '../../helpers/waiting.ts'
import {
  acceptedIds, acceptedSince, nothingPending, sendsFlow, startSendLoad, untilDelivered, untilNothingPending, startRelayWorld,
  type RelayWorld
} from './fault_env.ts'

let nats: ServerProcess
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let key: string

let world: RelayWorld
before(async () => {
  ({ nats, sink, ob, org, key } = world = await startRelayWorld({ OB_PUBLISH_TIMEOUT_MS: '1000', OB_ENGINE_ACK_WAIT_MS: '2000' }))
})
after(async () => { await world.close() })

test('NATS SIGKILLed and restarted on its store during sends: 202 or 503 only, no hang, every 202 delivered, ' +
  'nothing left stored or owed', { timeout: 150_000 }, async (t) => {
  const load = startSendLoad(ob.baseUrl, key, org, 'n')
  const results = load.results
  let duringOutage = 0
  try {
    await eventually(() => acceptedSince(results, 0) >= 8, 'sends accepted before the outage')
    await nats.stop('SIGKILL')
    const down = Date.now()
    const killedAt = results.length
    await eventually(() => results.slice(killedAt).some((r) => r.status === 503), 'a sender to see the outage')
    duringOutage = results.length
    await nats.start()
    t.diagnostic(`NATS was down ${Date.now() - down} ms`)
    // keep sending until sends succeed again for a while
    await eventually(() => sendsFlow(results), 'sends to succeed again', 30_000, 250)
    const recovered = results.length
    await eventually(() => acceptedSince(results, recovered) >= 8, 'sends accepted after the recovery')
  } finally {
    await load.stop() // also when a wait failed, so the senders do not outlive the test
  }

  const statuses = new Map<number, number>()
  for (const r of results) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
  t.diagnostic(`statuses ${JSON.stringify([...statuses])}; requests up to restart ${duringOutage}; ` +
    `slowest ${Math.max(...results.map((r) => r.ms))} ms`)
  for (const r of results) assert.ok(r.status === 202 || r.status === 503, `status ${r.status} ${r.error ?? ''}`)
  assert.ok((statuses.get(503) ?? 0) > 0, 'the outage was seen by senders')
  for (const r of results.filter((x) => x.status === 503)) assert.ok(Number(r.retryAfter) >= 1, 'a 503 carries Retry-After')
  const ids = acceptedIds(results)
  assert.ok(ids.length > 0)

  await untilDelivered(sink, org, ids, 60_000)
  const events = await EventWatcher.start(ob.proc.nc, org.orgId)
  try {
    await events.until(() => ids.every((id) => events.of(id, 'delivered').length >= 1), 30_000)
    for (const id of ids) assert.equal(events.of(id, 'delivered').length, 1, `one delivered event for ${id}`)
  } finally { events.stop() }
  // nats-server 2.9 can keep delivered messages stored and count removed ones as un-acknowledged after a SIGKILL;
  // the engine's sweep after the reconnect clears both, so at the end nothing is stored and nothing owed.
  const state = await untilNothingPending(nats.url, 50_000)
  assert.ok(nothingPending(state), JSON.stringify(state))
})
