import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DestinationBackoff, SUSPEND_AFTER, backoffSettings } from '../../../engine/destination_backoff.ts'

const R451 = '451 4.7.1 try again later'

/** A backoff on a hand-moved clock, without jitter: a held recipient comes back exactly when the period ends. */
function clocked (unprovenConcurrency = 10): { b: DestinationBackoff, clock: { now: number } } {
  const clock = { now: 1_000_000 }
  return { b: new DestinationBackoff({ firstMs: 1000, maxMs: 4000, unprovenConcurrency }, () => clock.now, () => 0), clock }
}

async function failTimes (b: DestinationBackoff, dest: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    assert.equal((await b.admit(dest)).kind, 'attempt')
    b.record(dest, 'transient', R451)
  }
}

test(`${SUSPEND_AFTER} transient failures in a row suspend the destination; ` +
  'its recipients are not attempted until the period ends', async () => {
  const { b, clock } = clocked()
  await failTimes(b, 'poison.example', SUSPEND_AFTER - 1)
  assert.deepEqual(b.suspended(), [])
  assert.equal((await b.admit('poison.example')).kind, 'attempt')
  assert.equal(b.record('poison.example', 'transient', R451), true, 'the failure that suspends says so')
  assert.deepEqual(b.suspended(), ['poison.example'])
  assert.deepEqual(await b.admit('poison.example'), { kind: 'suspended', probeAt: clock.now + 1000, lastResponse: R451 })
  assert.equal((await b.admit('healthy.example')).kind, 'attempt', 'other destinations are not affected')
})

test('an answer (2xx or 5xx) between failures resets the count', async () => {
  const { b } = clocked()
  await failTimes(b, 'd.example', SUSPEND_AFTER - 1)
  assert.equal((await b.admit('d.example')).kind, 'attempt')
  b.record('d.example', 'answered')
  await failTimes(b, 'd.example', SUSPEND_AFTER - 1)
  assert.deepEqual(b.suspended(), [])
})

test('after the period a probe of up to the capped attempts goes through; ' +
  'its first failure doubles the period up to the maximum, an answer ends the backoff', async () => {
  const { b, clock } = clocked(3)
  await failTimes(b, 'p.example', SUSPEND_AFTER)
  for (const period of [1000, 2000, 4000, 4000]) {
    clock.now += period
    for (let i = 0; i < 3; i++) {
      assert.equal((await b.admit('p.example')).kind, 'attempt', 'the probe: as many as an unproven destination gets')
    }
    assert.equal((await b.admit('p.example', false)).kind, 'busy', 'no more than that at once')
    b.record('p.example', 'transient', R451)
    b.record('p.example', 'transient', R451)
    b.record('p.example', 'transient', R451)
    const next = Math.min(4000, period * 2)
    assert.deepEqual(await b.admit('p.example'), { kind: 'suspended', probeAt: clock.now + next, lastResponse: R451 })
  }
  clock.now += 4000
  assert.equal((await b.admit('p.example')).kind, 'attempt')
  assert.equal((await b.admit('p.example')).kind, 'attempt')
  b.record('p.example', 'answered')
  assert.deepEqual(b.suspended(), [])
  for (let i = 0; i < 20; i++) {
    assert.equal((await b.admit('p.example')).kind, 'attempt', 'a destination that answered has no concurrency cap')
  }
  b.record('p.example', 'transient', R451)
  assert.deepEqual(b.suspended(), [], 'a recipient of the probe that fails after another one was accepted does not suspend again')
})

test('a probe without a verdict (throttled, crashed) lets the next recipient probe', async () => {
  const { b, clock } = clocked()
  await failTimes(b, 'p.example', SUSPEND_AFTER)
  clock.now += 1000
  assert.equal((await b.admit('p.example')).kind, 'attempt')
  b.record('p.example', 'unknown')
  assert.equal((await b.admit('p.example')).kind, 'attempt')
})

test('a destination that has not answered yet gets a capped number of attempts at once; the next waits for a slot', async () => {
  const { b } = clocked(2)
  assert.equal((await b.admit('new.example')).kind, 'attempt')
  assert.equal((await b.admit('new.example')).kind, 'attempt')
  assert.deepEqual(await b.admit('new.example', false), { kind: 'busy', retryAfterMs: 1000 }, 'no wait for slots the caller holds itself')
  let third: string | undefined
  const waiting = b.admit('new.example').then((a) => { third = a.kind })
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(third, undefined, 'waits while two are in flight')
  b.record('new.example', 'answered')
  await waiting
  assert.equal(third, 'attempt', 'an answer lets the waiting recipient through')
})

test('recipients waiting on a destination that gets suspended are not attempted', async () => {
  const { b } = clocked(1)
  await failTimes(b, 'p.example', SUSPEND_AFTER - 1)
  assert.equal((await b.admit('p.example')).kind, 'attempt')
  const waiting = b.admit('p.example')
  b.record('p.example', 'transient', R451)
  assert.equal((await waiting).kind, 'suspended')
})

test('settings follow the retry schedule and the SMTP pool', () => {
  assert.deepEqual(backoffSettings([60, 300, 900, 3600, 14400, 28800], 10), { firstMs: 60_000, maxMs: 3600_000, unprovenConcurrency: 10 })
  assert.deepEqual(backoffSettings([1, 1, 2], 4), { firstMs: 1000, maxMs: 2000, unprovenConcurrency: 4 })
})

test('a recipient that must have its one real attempt goes through a suspension, held only by the cap', async () => {
  const { b, clock } = clocked(2)
  await failTimes(b, 'p.example', SUSPEND_AFTER)
  assert.equal((await b.admit('p.example', true, true)).kind, 'attempt')
  assert.equal((await b.admit('p.example', false, true)).kind, 'attempt')
  assert.equal((await b.admit('p.example', false, true)).kind, 'busy', 'no more than the cap at once')
  assert.deepEqual(await b.admit('p.example'), { kind: 'suspended', probeAt: clock.now + 1000, lastResponse: R451 }, 'others still wait')
  b.record('p.example', 'transient', R451)
  assert.deepEqual(b.suspended(), ['p.example'], 'its failure changes nothing about the suspension')
})
