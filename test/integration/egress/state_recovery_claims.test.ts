import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Redis } from 'ioredis'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import { eventually } from '../../helpers/waiting.ts'
import { EgressState, recoverySteps, type LaneRecovery } from '../../../stores/egress/mod.ts'
import { engineClients, sleep } from './engine_clients.ts'

/**
 * A slowed lane recovers when it is read, so no write marks a step: the first reader after a step claims it in the
 * script it runs anyway, and each step is heard once across the cluster, however many engines read the lane.
 */
const own = useOwnRedis()
let clients: Redis[] = []
const EVERY = 300 // recovery period (ms)

before(async () => { clients = await engineClients(own, 3) })
after(() => { for (const c of clients) c.disconnect() })

/** An engine's state on each client, all telling `heard` of the steps they claim. */
function engines (heard: LaneRecovery[], n = 2): EgressState[] {
  return clients.slice(0, n).map((c) => new EgressState(c, Date.now, {
    recoverEveryMs: EVERY, slowQuietMs: 0, onRecovery: (r) => { heard.push(r) }
  }))
}

async function slowTwice (state: EgressState, lane: string): Promise<void> {
  await state.applyReply(lane, { kind: 'slow' }, 'r')
  await sleep(2) // two slows in one millisecond are one
  const r = await state.applyReply(lane, { kind: 'slow' }, 'r')
  assert.equal(r.throttle.factor, 0.25)
}

test('the steps between two factors, each as the factor after it', () => {
  assert.deepEqual(recoverySteps(0.25, 1), [0.5, 1])
  assert.deepEqual(recoverySteps(1 / 64, 1), [1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1])
  assert.deepEqual(recoverySteps(0.5, 0.5), [])
})

test('each recovery step is claimed once across the cluster by the senders, never by an operator\'s reader', async () => {
  const heard: LaneRecovery[] = []
  const [a, b] = engines(heard)
  const reader = new EgressState(clients[2]!, Date.now, { recoverEveryMs: EVERY }) // the operator API's: no listener
  await slowTwice(a!, 'ip-r|google')
  assert.equal(heard.length, 0, 'a slow is a change of its own, not a recovery')
  const until = Date.now() + 3 * EVERY + 200
  let sends = 0
  let reads = 0
  // ten callers per engine send on the lane while the operator's reader reads it as fast as it can
  await Promise.all([
    ...[a!, b!].flatMap((s) => Array.from({ length: 10 }, async () => {
      while (Date.now() < until) { await s.takeSend('ip-r|google', 60_000); sends++; await sleep(5) }
    })),
    (async () => {
      while (Date.now() < until) { await reader.snapshot(); await reader.throttle('ip-r|google'); reads++ }
    })()
  ])
  assert.ok(sends > 50 && reads > 5, `${sends} sends, ${reads} reads`)
  assert.deepEqual(heard.map((r) => [r.lane, r.source, r.provider, r.from, r.to]),
    [['ip-r|google', 'ip-r', 'google', 0.25, 0.5], ['ip-r|google', 'ip-r', 'google', 0.5, 1]])
  assert.equal((await a!.throttle('ip-r|google')).factor, 1)
})

test('a lane no mail uses: the next engine read of the lanes claims its steps together, once', async () => {
  const heard: LaneRecovery[] = []
  const [a, b] = engines(heard)
  await slowTwice(a!, 'ip-s|yahoo')
  await sleep(2 * EVERY + 50)
  const [first, second] = await Promise.all([a!.snapshot(), b!.snapshot()])
  assert.ok([first, second].every((s) => s.some((l) => l.lane === 'ip-s|yahoo')), 'both read the lane')
  assert.deepEqual(heard.map((r) => [r.lane, r.from, r.to]), [['ip-s|yahoo', 0.25, 1]])
  await a!.snapshot()
  assert.equal(heard.length, 1, 'a step is claimed once')
})

test('a reply after a recovery claims the steps before it, then slows from the recovered rate', async () => {
  const heard: LaneRecovery[] = []
  const [a] = engines(heard, 1)
  assert.equal((await a!.applyReply('ip-t|apple', { kind: 'slow' }, 'r')).throttle.factor, 0.5)
  const reader = new EgressState(clients[2]!, Date.now, { recoverEveryMs: EVERY })
  await eventually(async () => (await reader.throttle('ip-t|apple')).factor === 1, 'recovered (read without claiming)')
  const again = await a!.applyReply('ip-t|apple', { kind: 'slow' }, 'r')
  assert.equal(again.throttle.factor, 0.5)
  assert.deepEqual(heard.map((r) => [r.from, r.to]), [[0.5, 1]])
  // the slow is what is seen now: the next step is claimed from it
  await sleep(EVERY + 50)
  await a!.takeSend('ip-t|apple', 600)
  assert.deepEqual(heard.map((r) => [r.from, r.to]), [[0.5, 1], [0.5, 1]])
})
