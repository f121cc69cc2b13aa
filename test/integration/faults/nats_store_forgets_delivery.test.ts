import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { cpSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { connect } from '@nats-io/transport-node'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { closeAgent, messageIdHeader, pendingState, send, sendBody, sinkCounts, untilDelivered, untilNothingPending } from './fault_env.ts'

/**
 * A NATS server killed before it wrote down that a message was handed out and acknowledged hands the message out
 * again with a delivery count of 1, as if it were new. The test makes that happen for certain: the server's store is
 * copied while the message waits, the message is delivered and acknowledged, and the server is killed and started on
 * the copy. The engine that takes the message up again reads its delivery state first and does not send it twice.
 */
let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let gateway: TestOutbox
let org: TestOrg
let key: string
const engineEnv = (): Record<string, string> => ({ OB_ROLE: 'engine', OB_SMTP_RELAY: sink.url, OB_ENGINE_ACK_WAIT_MS: '2000' })

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start({ keepRaw: false })
  gateway = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway' } })
  org = await gateway.org()
  key = await gateway.key(org, ['send'])
})
after(async () => {
  await gateway.close()
  await closeAgent()
  await sink.close()
  await nats.dispose()
  await redis.dispose()
})

test('a message a restarted NATS server hands out again as new, after it was sent and acknowledged, ' +
  'is not sent twice', { timeout: 120_000 }, async () => {
  const r = await send(gateway.baseUrl, key, sendBody(org, 'once@dest.example'))
  assert.equal(r.status, 202)
  // the store while the message waits for an engine: stored, never handed out
  const copy = join(nats.dir, '..', `${nats.dir.split('/').pop()!}-copy`)
  await nats.stop('SIGTERM')
  cpSync(join(nats.dir, 'jetstream'), copy, { recursive: true })
  await nats.start()

  const first = await TestOutbox.start({ nats, redis, env: engineEnv() })
  await untilDelivered(sink, org, [r.id!])
  await untilNothingPending(nats.url, 30_000)
  await first.close()

  // the server forgets: killed and started on the store from before the delivery
  await nats.stop('SIGKILL')
  rmSync(join(nats.dir, 'jetstream'), { recursive: true, force: true })
  cpSync(copy, join(nats.dir, 'jetstream'), { recursive: true })
  rmSync(copy, { recursive: true, force: true })
  await nats.start()
  const nc = await connect({ servers: nats.url })
  try {
    assert.equal((await pendingState(nc)).outboundMessages, 1, 'the message is stored again')
  } finally {
    await nc.close()
  }

  const second = await TestOutbox.start({ nats, redis, env: engineEnv() })
  try {
    await untilNothingPending(nats.url, 30_000)
  } finally {
    await second.close()
  }
  assert.equal(sinkCounts(sink).get(messageIdHeader(org, r.id!)), 1, 'one SMTP transaction for the message')
})
