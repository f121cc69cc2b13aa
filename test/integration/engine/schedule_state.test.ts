import { test } from 'node:test'
import assert from 'node:assert/strict'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import { ScheduleState, SCHEDULE_STATE_TTL_MS, scheduleStateKey } from '../../../stores/schedule/mod.ts'

const own = useOwnRedis()
let n = 0
const newId = (): string => `msg_state${++n}`

test('a message waits until its time, then one copy is taken; the others and any cancel or reschedule after it are refused', async () => {
  const s = new ScheduleState(own.redis)
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
  const s = new ScheduleState(own.redis)
  const id = newId()
  assert.deepEqual(await s.cancel(id), { kind: 'ok' })
  assert.deepEqual(await s.cancel(id), { kind: 'ok' })
  assert.deepEqual(await s.take(id, 3, 1000, 5000), { kind: 'canceled' })
  assert.deepEqual(await s.reschedule(id, 9000), { kind: 'conflict' })
})

test('a new time replaces the queued one, later or earlier, and names the copy the engine holds back', async () => {
  const s = new ScheduleState(own.redis)
  const id = newId()
  assert.deepEqual(await s.reschedule(id, 8000), { kind: 'ok' }, 'the engine has not seen it yet')
  assert.deepEqual(await s.take(id, 4, 2000, 3000), { kind: 'wait', at: 8000 })
  assert.deepEqual(await s.reschedule(id, 5000), { kind: 'ok', waitingSeq: 4 })
  assert.deepEqual(await s.take(id, 11, 2000, 4000), { kind: 'wait', at: 5000 })
  assert.deepEqual(await s.take(id, 11, 2000, 5000), { kind: 'taken', dueAt: 5000 })
  assert.deepEqual(await s.take(id, 4, 2000, 8000), { kind: 'duplicate' })
})
