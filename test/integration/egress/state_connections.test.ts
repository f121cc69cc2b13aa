import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Redis } from 'ioredis'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { EgressState } from '../../../stores/egress/mod.ts'
import { LaneSockets } from '../../../engine/egress/lane_sockets.ts'
import { classifyError } from '../../../engine/actor/classify.ts'
import { freePort } from '../../helpers/ports.ts'
import { engineClients, sleep } from './engine_clients.ts'

/** Connection slots are held cluster-wide: many processes at once never hold more than the lane's cap. */
const own = useOwnRedis()
let clients: Redis[] = []

// node:test may start this hook beside useOwnRedis's, so engineClients waits for its server
before(async () => { clients = await engineClients(own, 4) })
after(() => { for (const c of clients) c.disconnect() })

test('4 clients × 50 concurrent callers never hold more than 7 slots at once, and use all 7', async () => {
  const lane = 'ip-a|google'
  const states = clients.map((c) => new EgressState(c))
  let held = 0
  let most = 0
  let refused = 0
  let overSeenInRedis = 0
  const until = Date.now() + 2000
  const caller = async (state: EgressState, id: string): Promise<void> => {
    for (let n = 0; Date.now() < until; n++) {
      const holder = `${id}:${n}`
      if (!await state.acquireConnection(lane, holder, 7, 10_000)) {
        refused++
        await sleep(2)
        continue
      }
      held++
      most = Math.max(most, held)
      await sleep(Math.random() * 5)
      held-- // counted down before the release is sent, so this count never runs ahead of Redis's
      await state.releaseConnection(lane, holder)
    }
  }
  const watcher = (async () => {
    while (Date.now() < until) {
      if (await own.redis.zcard('ob:eg:conn:{ip-a|google}') > 7) overSeenInRedis++
      await sleep(5)
    }
  })()
  await Promise.all([watcher, ...states.flatMap((s, i) => Array.from({ length: 50 }, async (_, j) => await caller(s, `c${i}-${j}`)))])
  assert.equal(most, 7, 'at most 7 held at once, and all 7 were used')
  assert.equal(overSeenInRedis, 0)
  assert.ok(refused > 0, 'callers beyond the cap were refused')
  assert.equal(await own.redis.zcard('ob:eg:conn:{ip-a|google}'), 0, 'every release freed its slot')
})

test('holders that stop renewing free their slots when their hold expires; renewed ones keep theirs', async () => {
  const [a, b] = clients.map((c) => new EgressState(c))
  const lane = 'ip-b|microsoft'
  for (let i = 0; i < 4; i++) assert.equal(await a!.acquireConnection(lane, `dies-${i}`, 7, 600), true)
  for (let i = 0; i < 3; i++) assert.equal(await a!.acquireConnection(lane, `lives-${i}`, 7, 600), true)
  assert.equal(await b!.acquireConnection(lane, 'late', 7, 600), false, 'all 7 are held')
  assert.equal(await a!.acquireConnection(lane, 'lives-0', 7, 600), true, 'a holder asking again keeps its slot')

  const lives = [0, 1, 2].map((i) => ({ lane, holder: `lives-${i}` }))
  const renewing = setInterval(() => { void a!.renewConnections(lives, 600) }, 150)
  try {
    // the four that died expire and free their slots (each 600 ms after it was taken, so on a busy machine not all
    // at once); the three renewed ones keep theirs
    for (let i = 1; i <= 4; i++) {
      await eventually(async () => await b!.acquireConnection(lane, `late-${i}`, 7, 5000), `slot ${i} freed by an expired holder`)
    }
    await nothingHappensFor(900)
    assert.equal(await b!.acquireConnection(lane, 'late-5', 7, 5000), false, 'renewed holders still hold theirs past their first hold')
  } finally {
    clearInterval(renewing)
  }
  assert.ok(await own.redis.pttl('ob:eg:conn:{ip-b|microsoft}') > 0, 'the holder set expires')
  await eventually(async () => await b!.acquireConnection(lane, 'late-5', 7, 5000), 'slots freed once renewals stop')
})

test('one renewal pipeline extends holders of many lanes; an infinite cap counts without refusing', async () => {
  const state = new EgressState(clients[0]!)
  const held = Array.from({ length: 20 }, (_, i) => ({ lane: `ip-c|site:mx${i}.example.com`, holder: `h${i}` }))
  for (const h of held) assert.equal(await state.acquireConnection(h.lane, h.holder, 1, 300), true)
  await state.renewConnections(held, 60_000)
  await nothingHappensFor(500)
  for (const h of held) assert.equal(await state.acquireConnection(h.lane, 'other', 1, 300), false, `${h.lane} still held`)
  for (let i = 0; i < 50; i++) assert.equal(await state.acquireConnection('ip-c|yahoo', `u${i}`, Infinity, 5000), true)
  assert.equal(await own.redis.zcard('ob:eg:conn:{ip-c|yahoo}'), 50)
})

test('a lane socket that cannot connect fails as nodemailer\'s own do, and gives its slot back', async () => {
  const state = new EgressState(clients[0]!)
  const sockets = new LaneSockets(state)
  try {
    const port = await freePort() // nothing listens there
    const err = await new Promise<Error & { code?: string, originalCode?: string }>((resolve, reject) => {
      sockets.hook('refused|lane', 1, undefined, 4)({ host: '127.0.0.1', port }, (e) => {
        if (e === null) reject(new Error('connected')); else resolve(e)
      })
    })
    assert.equal(err.code, 'ESOCKET')
    assert.equal(err.originalCode, 'ECONNREFUSED')
    assert.deepEqual(classifyError(err), { kind: 'deferred', response: `ESOCKET: connect ECONNREFUSED 127.0.0.1:${port}` })
    await eventually(async () => await state.acquireConnection('refused|lane', 'next', 1, 10_000), 'the slot was given back')
  } finally { sockets.close() }
})
