import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DAY_MS, DEFAULT_WARMUP, warmupAllowance, warmupDay } from '../../../protocol/egress/mod.ts'
import { warmupErrors } from '../../../protocol/egress/mod.ts'

const HOUR = 3_600_000
const utc = (iso: string): number => Date.parse(iso)

test('warm-up: days are UTC calendar days, day 1 being the day the warm-up started', () => {
  const start = utc('2026-11-28T23:30:00Z')
  assert.equal(warmupDay(start, start), 1)
  assert.equal(warmupDay(start, utc('2026-11-28T23:59:59.999Z')), 1)
  assert.equal(warmupDay(start, utc('2026-11-29T00:00:00Z')), 2, 'a new UTC day is a new warm-up day, 30 minutes in')
  assert.equal(warmupDay(utc('2026-11-28T00:00:00Z'), utc('2026-11-29T23:59:59Z')), 2)
  assert.equal(warmupDay(start, utc('2026-12-28T12:00:00Z')), 31)
  assert.equal(warmupDay(start, start - HOUR), 1, 'a clock behind the start counts as day 1')
  assert.equal(warmupDay(start, start - 3 * DAY_MS), 1)
})

test('warm-up: the allowance is the last step whose day has come', () => {
  const start = utc('2026-11-28T09:00:00Z')
  assert.deepEqual(warmupAllowance(start, start), { day: 1, perDay: 50, perHour: 10 })
  assert.deepEqual(warmupAllowance(start, utc('2026-11-29T00:00:00Z')), { day: 2, perDay: 100, perHour: 10 })
  assert.deepEqual(warmupAllowance(start, utc('2026-11-30T08:00:00Z')), { day: 3, perDay: 200, perHour: 17 })
  // day 9 has no step of its own: day 8's applies
  assert.deepEqual(warmupAllowance(start, start + 8 * DAY_MS), { day: 9, perDay: 2000, perHour: 167 })
  assert.deepEqual(warmupAllowance(start, start + 9 * DAY_MS), { day: 10, perDay: 3000, perHour: 250 })
  assert.deepEqual(warmupAllowance(start, start + 29 * DAY_MS), { day: 30, perDay: 100_000, perHour: 8334 })
})

test('warm-up: complete (no allowance) from the day after the last step', () => {
  const start = utc('2026-11-28T09:00:00Z')
  assert.equal(warmupAllowance(start, utc('2026-12-27T23:59:59.999Z'))?.day, 30)
  assert.equal(warmupAllowance(start, utc('2026-12-28T00:00:00Z')), undefined)
  assert.equal(warmupAllowance(start, start + 400 * DAY_MS), undefined)
  const steps = [{ day: 1, perDay: 5, perHour: 1 }, { day: 3, perDay: 9, perHour: 2 }]
  assert.deepEqual(warmupAllowance(start, start + 2 * DAY_MS, steps), { day: 3, perDay: 9, perHour: 2 })
  assert.equal(warmupAllowance(start, start + 3 * DAY_MS, steps), undefined)
  assert.equal(warmupAllowance(start, start, []), undefined, 'an empty curve is no warm-up')
  assert.equal(warmupAllowance(Number.NaN, start), undefined, 'no start, no warm-up')
})

test('warm-up: the default curve is valid, per hour about a twelfth of the day and at least 10', () => {
  assert.deepEqual(warmupErrors({ steps: [...DEFAULT_WARMUP] }), [])
  assert.ok(Object.isFrozen(DEFAULT_WARMUP))
  assert.equal(DEFAULT_WARMUP[0]?.day, 1)
  assert.equal(DEFAULT_WARMUP[0]?.perDay, 50)
  assert.equal(DEFAULT_WARMUP.at(-1)?.day, 30)
  let previous = 0
  for (const step of DEFAULT_WARMUP) {
    assert.equal(step.perHour, Math.max(10, Math.ceil(step.perDay / 12)), `day ${step.day}`)
    assert.ok(step.perDay > previous && step.perDay <= 2 * Math.max(previous, 25), `day ${step.day} at most doubles`)
    previous = step.perDay
  }
})

test('warm-up: curves are checked by the one writer of them (records.ts)', () => {
  assert.deepEqual(warmupErrors({ steps: [{ day: 1, perDay: 10, perHour: 10 }, { day: 366, perDay: 10_000_000, perHour: 1 }] }), [])
  const bad: unknown[] = [
    [], [null], [{ day: 2, perDay: 10, perHour: 1 }], [{ day: 1, perDay: 10, perHour: 1 }, { day: 1, perDay: 20, perHour: 2 }],
    [{ day: 1, perDay: 10, perHour: 1 }, { day: 5, perDay: 20, perHour: 2 }, { day: 4, perDay: 30, perHour: 3 }],
    [{ day: 0, perDay: 10, perHour: 1 }], [{ day: 1.5, perDay: 10, perHour: 1 }],
    [{ day: 1, perDay: 10, perHour: 1 }, { day: 367, perDay: 10, perHour: 1 }], [{ day: 1, perDay: 0, perHour: 1 }],
    [{ day: 1, perDay: 10_000_001, perHour: 1 }], [{ day: 1, perDay: '10', perHour: 1 }], [{ day: 1, perDay: 10, perHour: 11 }],
    [{ day: 1, perDay: 10, perHour: 0 }], [{ day: 1, perDay: 10 }], [{ day: 1, perDay: 10, perHour: 1, perMinute: 1 }]
  ]
  for (const steps of bad) assert.ok(warmupErrors({ steps }).length > 0, JSON.stringify(steps).slice(0, 80))
})
