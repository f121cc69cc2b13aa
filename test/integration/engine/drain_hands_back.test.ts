import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'
import { STREAM_OUTBOUND } from '../../../protocol/mod.ts'

let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start({ slowMs: 4000 })
})
after(async () => {
  await sink.close()
  await nats.dispose()
  await redis.dispose()
})

test('drain lets fast sends finish, hands back what misses the deadline, and the next engine delivers it', async () => {
  const env = { OB_SMTP_RELAY: sink.url, OB_ROLE: 'engine', OB_SHUTDOWN_TIMEOUT_MS: '1000' }
  const first = await TestOutbox.start({ nats, redis, env })
  const org: TestOrg = await first.org()
  const events = await EventWatcher.start(first.proc.nc, org.orgId)
  const fast = queuedMessage(org, { to: ['fast@dest.example'] })
  const slow = queuedMessage(org, { to: ['slow@dest.example'] })
  await publishQueued(first.proc.nc, first.proc.config, fast)
  await events.until(() => events.of(fast.id, 'delivered').length === 1)
  await publishQueued(first.proc.nc, first.proc.config, slow)
  await sink.until(() => sink.rcptLog.includes('slow@dest.example 250'))
  await first.proc.engine!.drain(1000) // the slow DATA reply takes 4 s: it cannot finish in time
  // The sink records the slow message just before it replies to DATA: a drain that waited for the reply would
  // return after that, one that keeps its deadline returns before.
  assert.equal(sink.to('slow@dest.example').length, 0, 'drain respects its deadline: it returned before the send finished')
  events.stop()
  await first.proc.stop()

  const jsmNc = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway' } })
  const jsm = await jetstreamManager(jsmNc.proc.nc)
  const info = await jsm.streams.info(STREAM_OUTBOUND)
  assert.equal(info.state.messages, 1, 'the unfinished message is still in the work queue')
  await jsmNc.close()

  const second = await TestOutbox.start({ nats, redis, env })
  const events2 = await EventWatcher.start(second.proc.nc, org.orgId)
  await events2.until(() => events2.of(slow.id, 'delivered').length === 1, 20_000)
  assert.ok(sink.to('slow@dest.example').length >= 1)
  events2.stop()
  await second.close()
})
