import { test } from 'node:test'
import assert from 'node:assert/strict'
import { LANE_IDLE_MS, poolKey, TransportCache, type Destination } from '../../../engine/actor/transports.ts'

const mx: Destination = { host: 'mx.example.com', connectTo: '192.0.2.10', port: 25, secure: false }

test('two sources to one MX host are two pools; the same source is one', () => {
  const a = { ...mx, localAddress: '198.51.100.1', ehlo: 'mta1.example.test' }
  const b = { ...mx, localAddress: '198.51.100.2', ehlo: 'mta2.example.test' }
  const sameAddressOtherName = { ...a, ehlo: 'other.example.test' }
  const keys = new Set([poolKey(mx), poolKey(a), poolKey(b), poolKey(sameAddressOtherName)])
  assert.equal(keys.size, 4)
  assert.equal(poolKey({ ...a }), poolKey(a))
  assert.equal(poolKey({ ...a, family: 4 }), poolKey(a), 'the family is information, not identity')
  assert.notEqual(poolKey({ ...a, maxConnections: 2 }), poolKey(a), 'new limits take a new pool at once')
  assert.notEqual(poolKey({ ...a, maxMessages: 10 }), poolKey(a))
})

test('a pool is bound to its source, says its EHLO name and takes its own limits', () => {
  const cache = new TransportCache(5)
  try {
    const source = { localAddress: '2001:db8::25', ehlo: 'mta6.example.test' }
    const bound = cache.get({ ...mx, ...source, maxConnections: 2, maxMessages: 7, family: 6 })
    const opts = bound.pool.options as { localAddress?: string, name?: string, maxConnections?: number, maxMessages?: number }
    assert.equal(opts.localAddress, '2001:db8::25')
    assert.equal(opts.name, 'mta6.example.test')
    assert.equal(opts.maxConnections, 2)
    assert.equal(opts.maxMessages, 7)
    const host = cache.get(mx).pool.options as typeof opts
    assert.equal(host.localAddress, undefined, 'the host source binds nothing')
    assert.equal(host.name, undefined, 'and says the host name nodemailer finds')
    assert.equal(host.maxConnections, 5)
    assert.equal(host.maxMessages, 100)
    assert.equal(cache.get({ ...mx }), cache.get(mx), 'one destination, one pool')
  } finally { cache.close() }
})

test('closing the cache tells onClose the key of every pool', () => {
  const closed: string[] = []
  const cache = new TransportCache(1, { onClose: (key) => closed.push(key) })
  const a = { ...mx, localAddress: '198.51.100.1' }
  cache.get(mx)
  cache.get(a)
  assert.deepEqual(cache.keys().sort(), [poolKey(mx), poolKey(a)].sort())
  cache.close()
  assert.deepEqual(closed.sort(), [poolKey(mx), poolKey(a)].sort())
  assert.deepEqual(cache.keys(), [])
})

test('the idle sweep closes a pool unused for a minute, tells onClose, and spares one with a message in flight', (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'Date'] })
  const closed: string[] = []
  const cache = new TransportCache(1, { onClose: (key) => closed.push(key) })
  try {
    const busy = { ...mx, localAddress: '198.51.100.9' }
    cache.get(mx)
    const pool = cache.get(busy)
    pool.inFlight = 1 // a long DATA: the pool is not idle while it lasts
    t.mock.timers.tick(45_000)
    assert.deepEqual(closed, [], 'not idle for a minute yet')
    t.mock.timers.tick(30_000)
    assert.deepEqual(closed, [poolKey(mx)])
    assert.deepEqual(cache.keys(), [poolKey(busy)])
    pool.inFlight = 0
    t.mock.timers.tick(15_000)
    assert.deepEqual(closed, [poolKey(mx), poolKey(busy)])
  } finally { cache.close() }
})

test('a lane\'s pool closes LANE_IDLE_MS after its last message is answered, giving its slots back; others wait for the sweep', (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'setTimeout', 'Date'] })
  const closed: string[] = []
  const cache = new TransportCache(1, { onClose: (key) => closed.push(key) })
  try {
    const lane = { ...mx, localAddress: '198.51.100.7', lane: 'mta7|google' }
    const pool = cache.get(lane)
    assert.equal(cache.get(mx).onIdle, undefined, 'a pool of no lane keeps its connections for the sweep')
    pool.onIdle!() // the last message in flight was answered
    t.mock.timers.tick(LANE_IDLE_MS / 2)
    cache.get(lane) // used again meanwhile: idle counts from then
    pool.onIdle!()
    t.mock.timers.tick(LANE_IDLE_MS / 2)
    assert.deepEqual(closed, [], 'used within the idle time')
    t.mock.timers.tick(LANE_IDLE_MS / 2)
    assert.deepEqual(closed, [poolKey(lane)])
    assert.deepEqual(cache.keys(), [poolKey(mx)])
    assert.notEqual(cache.get(lane), pool, 'the next message gets a new pool')
  } finally { cache.close() }
})
