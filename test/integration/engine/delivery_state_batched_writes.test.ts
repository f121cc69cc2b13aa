import { test } from 'node:test'
import assert from 'node:assert/strict'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import {
  DELIVERY_STATE_TTL_S, DeliveryStateChanges, DeliveryStateWriter, deliveryStateKey, parseDeliveryState
} from '../../../engine/delivery_state_layout.ts'

const own = useOwnRedis()

/**
 * Delivery state writes made in one turn of the event loop go to Redis together; each stays its own: it is
 * written with its expiry, and a write Redis refuses fails alone, with its own error.
 */
test('writes of one turn are each stored with their expiry; a refused one fails alone', async () => {
  const writer = new DeliveryStateWriter(own.redis)
  const ids = Array.from({ length: 5 }, (_v, i) => `msg_batch_${Date.now()}_${i}`)
  await own.redis.set(deliveryStateKey(ids[2]!), 'not a hash')
  const results = await Promise.all(ids.map(async (id, i) =>
    await writer.write(id, new DeliveryStateChanges().deferred(`r${i}@dest.example`, i + 1, 1000 + i))))
  results.forEach((err, i) => {
    if (i === 2) assert.match(String(err), /WRONGTYPE/)
    else assert.equal(err, undefined)
  })
  for (const [i, id] of ids.entries()) {
    if (i === 2) continue
    const state = parseDeliveryState(await own.redis.hgetall(deliveryStateKey(id)))
    assert.deepEqual(state.get(`r${i}@dest.example`), { published: false, attempts: i + 1, notBefore: 1000 + i })
    const ttl = await own.redis.ttl(deliveryStateKey(id))
    assert.ok(ttl > DELIVERY_STATE_TTL_S - 60 && ttl <= DELIVERY_STATE_TTL_S, `ttl ${ttl}`)
  }
})

test('a write after a batch went out starts the next batch', async () => {
  const writer = new DeliveryStateWriter(own.redis)
  const id = `msg_batch_next_${Date.now()}`
  assert.equal(await writer.write(id, new DeliveryStateChanges().notBefore('a@dest.example', 5)), undefined)
  assert.equal(await writer.write(id, new DeliveryStateChanges().published('a@dest.example')), undefined)
  assert.deepEqual(parseDeliveryState(await own.redis.hgetall(deliveryStateKey(id))).get('a@dest.example'),
    { published: true, attempts: 0, notBefore: 5 })
})
