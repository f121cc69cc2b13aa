import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DUE_EARLY_MS, giveUpAt, nextAttemptAt, spanPassed } from '../../../engine/retry_schedule.ts'

const SCHEDULE = [60, 300, 900]
const ACCEPTED = '2026-11-22T03:00:00.000Z'
const T0 = Date.parse(ACCEPTED)

test('the give-up time is the schedule span after acceptance, or after a later scheduled_at', () => {
  assert.equal(giveUpAt({ created_at: ACCEPTED }, SCHEDULE), T0 + 1260_000)
  assert.equal(giveUpAt({ created_at: ACCEPTED, scheduled_at: '2026-11-22T05:00:00.000Z' }, SCHEDULE), T0 + 7200_000 + 1260_000)
  assert.equal(giveUpAt({ created_at: ACCEPTED, scheduled_at: '2026-11-22T02:59:30.000Z' }, SCHEDULE), T0 + 1260_000,
    'a scheduled_at in the past changes nothing')
})

test('a rescheduled message counts from the time it became due, later or earlier than its scheduled_at', () => {
  const msg = { created_at: ACCEPTED, scheduled_at: '2026-11-22T05:00:00.000Z' }
  assert.equal(giveUpAt(msg, SCHEDULE, T0 + 80 * 3600_000), T0 + 80 * 3600_000 + 1260_000)
  assert.equal(giveUpAt(msg, SCHEDULE, T0 + 3600_000), T0 + 3600_000 + 1260_000)
})

test('without suspensions, the turn after the last step is the one that gives up', () => {
  const end = giveUpAt({ created_at: ACCEPTED }, SCHEDULE)
  let at = T0 + 20 // the first attempt's outcome
  for (let attempt = 1; attempt <= SCHEDULE.length; attempt++) {
    assert.equal(spanPassed(at, end), false, `attempt ${attempt} is retried`)
    at = nextAttemptAt(at, attempt, SCHEDULE) + 15
  }
  assert.equal(spanPassed(at, end), true)
  // a turn taken DUE_EARLY_MS early still counts
  assert.equal(spanPassed(end - DUE_EARLY_MS, end), true)
  assert.equal(spanPassed(end - DUE_EARLY_MS - 1, end), false)
})

test('a recipient whose attempts were delayed keeps the steps it has not used, the last one repeating', () => {
  assert.equal(nextAttemptAt(T0, 1, SCHEDULE), T0 + 60_000)
  assert.equal(nextAttemptAt(T0, 3, SCHEDULE), T0 + 900_000)
  assert.equal(nextAttemptAt(T0, 7, SCHEDULE), T0 + 900_000)
})
