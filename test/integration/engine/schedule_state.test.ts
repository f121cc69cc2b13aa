import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { NatsConnection } from '@nats-io/transport-node'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { connectNats } from '../../../stores/clients/mod.ts'
import { ScheduleLedger, ScheduleState, SCHEDULE_STATE_TTL_MS, scheduleStateKey } from '../../../stores/schedule/mod.ts'

const own = useOwnRedis()
let nats: ServerProcess
let nc: NatsConnection
let ledger: ScheduleLedger
before(async () => {
  nats = await ServerProcess.nats()
  nc = await connectNats([nats.url], 'test')
  ledger = await ScheduleLedger.open(nc, 1, SCHEDULE_STATE_TTL_MS)
})
after(async () => {
  await nc.close()
  await nats.dispose()
})
let n = 0
const newId = (): string => `msg_state${++n}`

test('a message waits until its time, then one copy is taken; the others and any cancel or reschedule after it are refused', async () => {
  const s = new ScheduleState(own.redis, ledger)
  const id = newId()
  assert.deepEqual(await s.take(id, 7, 2000, 1000), { kind: 'wait', at: 2000 })
  assert.ok(await own.redis.pttl(scheduleStateKey(id)) > SCHEDULE_STATE_TTL_MS - 60_000, 'the state expires')
  assert.deepEqual(await s.take(id, 7, 2000, 2000), { kind: 'taken', dueAt: 2000 })
  assert.deepEqual(await s.take(id, 7, 2000, 2000), { kind: 'taken', dueAt: 2000 }, 'a redelivery of the copy taken goes on')
  assert.deepEqual(await s.take(id, 9, 2000, 5000), { kind: 'duplicate' })
  assert.deepEqual(await s.cancel(id), { kind: 'conflict' })
  assert.deepEqual(await s.reschedule(id, 9000), { kind: 'conflict' })
})

test('a cancel before the take wins for good, and is answered ok again', async () => {
  const s = new ScheduleState(own.redis, ledger)
  const id = newId()
  assert.deepEqual(await s.cancel(id), { kind: 'ok' })
  assert.deepEqual(await s.cancel(id), { kind: 'ok' })
  assert.deepEqual(await s.take(id, 3, 1000, 5000), { kind: 'canceled' })
  assert.deepEqual(await s.reschedule(id, 9000), { kind: 'conflict' })
})

test('a new time replaces the queued one, later or earlier, and names the copy the engine holds back', async () => {
  const s = new ScheduleState(own.redis, ledger)
  const id = newId()
  assert.deepEqual(await s.reschedule(id, 8000), { kind: 'ok' }, 'the engine has not seen it yet')
  assert.deepEqual(await s.take(id, 4, 2000, 3000), { kind: 'wait', at: 8000 })
  assert.deepEqual(await s.reschedule(id, 5000), { kind: 'ok', waitingSeq: 4 })
  assert.deepEqual(await s.take(id, 11, 2000, 4000), { kind: 'wait', at: 5000 })
  assert.deepEqual(await s.take(id, 11, 2000, 5000), { kind: 'taken', dueAt: 5000 })
  assert.deepEqual(await s.take(id, 4, 2000, 8000), { kind: 'duplicate' })
})

test('a cancel outlives Redis: after FLUSHALL the take finds it canceled, and a reschedule is refused', async () => {
  const s = new ScheduleState(own.redis, ledger)
  const id = newId()
  assert.deepEqual(await s.take(id, 5, 2000, 1000), { kind: 'wait', at: 2000 })
  assert.deepEqual(await s.cancel(id), { kind: 'ok' })
  await own.redis.flushall()
  assert.deepEqual(await s.reschedule(id, 9000), { kind: 'conflict' })
  assert.deepEqual(await s.take(id, 5, 2000, 3000), { kind: 'canceled' })
  assert.equal(await own.redis.hget(scheduleStateKey(id), 'state'), 'canceled', 'Redis holds the cancel again')
  assert.deepEqual(await s.cancel(id), { kind: 'ok' }, 'cancelling again answers as the first time')
})

test('a new time outlives Redis: after FLUSHALL the queued time no longer sends it', async () => {
  const s = new ScheduleState(own.redis, ledger)
  const id = newId()
  assert.deepEqual(await s.take(id, 6, 2000, 1000), { kind: 'wait', at: 2000 })
  assert.deepEqual(await s.reschedule(id, 8000), { kind: 'ok', waitingSeq: 6 })
  await own.redis.flushall()
  assert.deepEqual(await s.take(id, 6, 2000, 2000), { kind: 'wait', at: 8000 }, 'held to the new time, not sent at the queued one')
  assert.deepEqual(await s.take(id, 6, 2000, 8000), { kind: 'taken', dueAt: 8000 },
    'due from the new time, which the retry span counts from')
})

test('the bucket keeps decisions as long as the schedule state', async () => {
  const jsm = await (await import('@nats-io/jetstream')).jetstreamManager(nc)
  const info = await jsm.streams.info('KV_ob_schedule_decisions')
  assert.equal(info.config.max_age, SCHEDULE_STATE_TTL_MS * 1_000_000)
})
