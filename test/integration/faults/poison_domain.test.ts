import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { EventWatcher } from '../../helpers/engine_env.ts'
import {
  acceptedIds, closeAgent, messageIdHeader, nothingPending, sendMany, sinkCounts, untilDelivered, untilNothingPending
} from './fault_env.ts'

// The sink answers 451 to every `tempfail…` recipient, forever: that is the poison traffic. One shard with room
// for 4 messages, and more poison than that, so a deferred message that kept its slot would stop healthy mail.
// After SUSPEND_AFTER failures in a row the destination is suspended: its mail waits for the end of each backoff
// period, when a probe of a few recipients makes real attempts; a turn spent waiting is no attempt (no deferred
// event). Each recipient gives up (soft bounce) once the schedule's span has passed and it was really attempted.
// How much the poison slows healthy mail is measured by bench/poison.ts.
const POISON = 12
const HEALTHY = 60

let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let key: string
let events: EventWatcher

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start({ keepRaw: false, tempfailTimes: Number.MAX_SAFE_INTEGER })
  ob = await TestOutbox.start({
    nats, redis,
    env: {
      OB_ROLE: 'all', OB_SMTP_RELAY: sink.url, OB_ENGINE_SHARDS: '1', OB_ENGINE_THREADS: '1', OB_ENGINE_SHARD_CAPACITY: '4',
      OB_DELIVERY_RETRY_SCHEDULE: '1,1,2', OB_ENGINE_ACK_WAIT_MS: '2000'
    }
  })
  org = await ob.org()
  key = await ob.key(org, ['send'])
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await closeAgent()
  await sink.close()
  await nats.dispose()
  await redis.dispose()
})

test('a destination that always answers 4xx is deferred with growing attempts, backed off, ' +
  'and does not hold up healthy mail', { timeout: 60_000 }, async (t) => {
  const poison = acceptedIds(await sendMany(ob.baseUrl, key, org, POISON, (i) => `tempfail${i}@poison.example`))
  const healthy = acceptedIds(await sendMany(ob.baseUrl, key, org, HEALTHY, (i) => `h${i}@healthy.example`))
  assert.equal(poison.length, POISON)
  assert.equal(healthy.length, HEALTHY)

  await untilDelivered(sink, org, healthy, 30_000)
  const counts = sinkCounts(sink)
  for (const id of healthy) assert.equal(counts.get(messageIdHeader(org, id)), 1)
  for (const id of poison) assert.equal(counts.has(messageIdHeader(org, id)), false, 'poison mail never reaches the mailbox')

  await events.until(() => poison.every((id) => events.of(id, 'bounced').length === 1), 30_000)
  // Deferred events count real attempts one by one (the give-up may be one more, or a turn spent waiting); then
  // one soft bounce. No recipient gives up without a real attempt.
  for (const [i, id] of poison.entries()) {
    const attempts = events.of(id, 'deferred').map((e) => (e.data as { attempt: number }).attempt)
    const real = sink.rcptLog.filter((l) => l.startsWith(`tempfail${i}@poison.example `)).length
    assert.ok(real >= 1, `${id} was really attempted`)
    assert.deepEqual(attempts, attempts.map((_, n) => n + 1), `deferred attempts of ${id}`)
    assert.ok(attempts.length === real || attempts.length === real - 1,
      `${id}: ${attempts.length} deferred events for ${real} real attempts`)
    const bounce = events.of(id, 'bounced')
    assert.equal(bounce.length, 1)
    assert.equal((bounce[0]!.data as { bounce_type: string }).bounce_type, 'soft')
    assert.equal((bounce[0]!.data as { bounce_code: string }).bounce_code, '451')
  }
  // without the backoff every poison message makes 4 transactions (3 deferrals, then the soft bounce); with it, a
  // message makes its first attempt and, once the span has passed, about one more (seen: 18 to 24 for 12 messages)
  const transactions = sink.rcptLog.filter((l) => l.startsWith('tempfail')).length
  t.diagnostic(`${transactions} transactions to the poison destination for ${POISON} messages`)
  assert.ok(transactions <= POISON * 3, `poison destination backed off: ${transactions} transactions`)
  // Were deferred poison holding their slots, no healthy message could go before a poison message gave up (the 4 slots
  // are taken by poison sent first). Compared with the first bounce, not the last: on a loaded machine the 60 healthy
  // messages can take longer than the poison schedule's 4 s span, which says nothing of slots.
  const healthyDone = healthy.map((id) => Date.parse(events.of(id, 'delivered')[0]?.timestamp ?? '0'))
  const poisonDone = poison.map((id) => Date.parse(events.of(id, 'bounced')[0]!.timestamp))
  t.diagnostic(`healthy mail finished ${Math.max(...poisonDone) - Math.max(...healthyDone)} ms before the last poison bounce; ` +
    `${healthyDone.filter((at) => at < Math.min(...poisonDone)).length} of ${HEALTHY} healthy delivered before the first poison bounce`)
  assert.ok(Math.min(...healthyDone) < Math.min(...poisonDone), 'healthy mail did not wait for the poison retries to run out')
  const state = await untilNothingPending(nats.url)
  assert.ok(nothingPending(state), JSON.stringify(state))
})
