import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { ServerProcess } from '../../helpers/servers.ts'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import {
  acceptedIds, acceptedSince, sendsFlow, startSendLoad, sinkCounts, untilDelivered, startRelayWorld, type RelayWorld
} from './fault_env.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'

/**
 * A NATS server killed (SIGKILL) and restarted on its store can forget, for messages it handed out just before,
 * that it did (their delivery count starts again at 1) and that they were acknowledged (a delivered message is
 * stored again). The engine is not stopped, so no SMTP transaction of it is cut short: each message it hands out
 * again is looked up in its delivery state first and none reaches the SMTP server twice.
 */
const RESTARTS = 5

let nats: ServerProcess
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let key: string
let world: RelayWorld
before(async () => { ({ nats, sink, ob, org, key } = world = await startRelayWorld({ OB_PUBLISH_TIMEOUT_MS: '1000', OB_ENGINE_ACK_WAIT_MS: '2000' })) })
after(async () => { await world.close() })

test('NATS SIGKILLed and restarted during sends, the engine running through: no message reaches the SMTP server twice', { timeout: 240_000 }, async (t) => {
  const load = startSendLoad(ob.baseUrl, key, org, 'nr', 12)
  for (let i = 0; i < RESTARTS; i++) {
    // each kill finds the engine delivering: sends accepted and mail reaching the sink since the last restart
    const [answered, delivered] = [load.results.length, sink.messages.length]
    await eventually(() => acceptedSince(load.results, answered) >= 8 && sink.messages.length >= delivered + 8,
      'sends accepted and delivered')
    await nats.stop('SIGKILL')
    const killedAt = load.results.length
    await eventually(() => load.results.slice(killedAt).some((r) => r.status !== 202), 'a sender to see the outage')
    await nats.start()
  }
  await eventually(() => sendsFlow(load.results), 'sends to succeed again', 30_000, 250)
  await load.stop()
  const ids = acceptedIds(load.results)
  assert.ok(ids.length > 0)
  await untilDelivered(sink, org, ids, 90_000)
  await nothingHappensFor(3000) // a message handed out again after the last delivery would show here
  const counts = sinkCounts(sink)
  const duplicated = [...counts].filter(([, n]) => n > 1).length
  t.diagnostic(`accepted ${ids.length}, SMTP transactions ${sink.messages.length}, duplicated ${duplicated}`)
  assert.equal(duplicated, 0, 'no message sent twice')
})
