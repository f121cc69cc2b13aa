import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { AckPolicy, RetentionPolicy, jetstream, jetstreamManager, type JetStreamManager, type JsMsg } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { eventually } from '../../helpers/waiting.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { sweepWorkQueue } from '../../../engine/work_queue_sweep.ts'

/**
 * The work-queue sweep against a real nats-server of the test's own: what it removes and what it must leave,
 * and the state a SIGKILLed nats-server leaves behind under acknowledgements and delayed negative ones.
 */
let nats: ServerProcess
let nc: NatsConnection
let jsm: JetStreamManager
before(async () => {
  nats = await ServerProcess.nats()
  nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 })
  jsm = await jetstreamManager(nc)
})
after(async () => {
  await nc.close()
  await nats.dispose()
})

const enc = new TextEncoder()
const dec = new TextDecoder()
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

async function pull (stream: string, consumer: string, n: number, expires = 1000): Promise<JsMsg[]> {
  const c = await jetstream(nc).consumers.get(stream, consumer)
  const out: JsMsg[] = []
  for await (const m of await c.fetch({ max_messages: n, expires })) out.push(m)
  return out
}

test('a full sweep removes what is done below and above the ack floor and leaves unfinished mail and its pending entries', async () => {
  // limits retention keeps acknowledged messages stored, which is the state a killed server leaves a work queue in
  await jsm.streams.add({ name: 'SWEEP_A', subjects: ['sa.>'] })
  await jsm.consumers.add('SWEEP_A', { durable_name: 'c0', filter_subject: 'sa.0', ack_policy: AckPolicy.Explicit, ack_wait: 30e9 })
  const js = jetstream(nc)
  const bodies = ['done', 'done', 'done', 'done', 'open', 'open', 'open', 'open', 'open', 'open']
  for (const b of bodies) await js.publish('sa.0', enc.encode(b))
  await js.publish('sa.1', enc.encode('other shard'))
  const got = await pull('SWEEP_A', 'c0', 6)
  for (const m of got.slice(0, 3)) await m.ackAck()

  const seen: string[] = []
  const settled = async (data: Uint8Array): Promise<boolean> => { seen.push(dec.decode(data)); return dec.decode(data) === 'done' }
  const light = await sweepWorkQueue({ nc, jsm }, { stream: 'SWEEP_A', consumer: 'c0', subject: 'sa.0', settled, full: false })
  assert.deepEqual(light, { removed: 3, released: 0 }, 'a light sweep removes only what is at or below the floor')
  assert.deepEqual(seen.splice(0), ['done', 'done', 'done'], 'and judges nothing above it')

  const full = await sweepWorkQueue({ nc, jsm }, { stream: 'SWEEP_A', consumer: 'c0', subject: 'sa.0', settled, full: true })
  assert.deepEqual(full, { removed: 1, released: 0 })
  assert.deepEqual(seen, ['done', 'open', 'open'], 'only delivered messages above the floor are judged')
  const c = await jsm.consumers.info('SWEEP_A', 'c0')
  assert.equal(c.num_ack_pending, 2, 'the unfinished delivered messages are still pending')
  assert.equal(c.num_pending, 4, 'undelivered messages are untouched')
  const s = await jsm.streams.info('SWEEP_A')
  assert.equal(s.state.messages, 7, 'two pending, four undelivered, one of the other subject')
  const again = await sweepWorkQueue({ nc, jsm },
    { stream: 'SWEEP_A', consumer: 'c0', subject: 'sa.0', settled: async () => false, full: true })
  assert.deepEqual(again, { removed: 0, released: 0 })
  const rest = await pull('SWEEP_A', 'c0', 10)
  assert.deepEqual(rest.map((m) => dec.decode(m.data)), ['open', 'open', 'open', 'open'])
})

test('sweeps release nothing a consumer still owes: ' +
  'deferred, scheduled and in-flight messages between other shards\' messages come back', async () => {
  await jsm.streams.add({ name: 'SWEEP_D', subjects: ['sd.>'], retention: RetentionPolicy.Workqueue })
  for (const s of [0, 1]) {
    await jsm.consumers.add('SWEEP_D', {
      durable_name: `d${s}`, filter_subject: `sd.${s}`, ack_policy: AckPolicy.Explicit, ack_wait: 30e9, max_deliver: -1
    })
  }
  const js = jetstream(nc)
  const WAIT_MS = 4000
  // the stream sequences of two shards interleave, as the engine's shards do; acknowledgements come out of order
  await js.publish('sd.1', enc.encode('scheduled'))
  for (const m of await pull('SWEEP_D', 'd1', 1)) m.nak(WAIT_MS)
  for (let i = 0; i < 3; i++) await js.publish('sd.0', enc.encode('done'))
  for (const m of await pull('SWEEP_D', 'd0', 3)) await m.ackAck()
  await js.publish('sd.1', enc.encode('in flight'))
  await js.publish('sd.0', enc.encode('deferred'))
  for (const m of await pull('SWEEP_D', 'd0', 1)) m.nak(WAIT_MS)
  for (let i = 0; i < 2; i++) await js.publish('sd.0', enc.encode('done'))
  for (const m of await pull('SWEEP_D', 'd0', 2)) await m.ackAck()
  const inFlight = await pull('SWEEP_D', 'd1', 1)
  assert.deepEqual(inFlight.map((m) => dec.decode(m.data)), ['in flight'])
  await sleep(200)
  const owed = async (): Promise<number[]> =>
    await Promise.all([0, 1].map(async (s) => (await jsm.consumers.info('SWEEP_D', `d${s}`)).num_ack_pending))
  assert.deepEqual(await owed(), [1, 2])

  const settled = async (data: Uint8Array): Promise<boolean> => dec.decode(data) === 'done'
  for (const full of [false, true, false]) {
    for (const s of [0, 1]) {
      const r = await sweepWorkQueue({ nc, jsm }, { stream: 'SWEEP_D', consumer: `d${s}`, subject: `sd.${s}`, settled, full })
      assert.deepEqual(r, { removed: 0, released: 0 }, `${full ? 'full' : 'light'} sweep of shard ${s}`)
    }
  }
  assert.deepEqual(await owed(), [1, 2], 'every pending entry is still there')
  inFlight[0]!.nak(WAIT_MS)
  const back = [...await pull('SWEEP_D', 'd0', 1, WAIT_MS + 2000), ...await pull('SWEEP_D', 'd1', 2, WAIT_MS + 2000)]
  assert.deepEqual(back.map((m) => dec.decode(m.data)).sort(), ['deferred', 'in flight', 'scheduled'])
  for (const m of back) await m.ackAck()
  assert.equal((await jsm.streams.info('SWEEP_D')).state.messages, 0)
})

test('after SIGKILLs of nats-server under acks and delayed naks, ' +
  'a full sweep leaves nothing stored and nothing un-acknowledged', { timeout: 120_000 }, async (t) => {
  const shards = [0, 1, 2, 3]
  await jsm.streams.add({ name: 'SWEEP_WQ', subjects: ['wq.>'], retention: RetentionPolicy.Workqueue, duplicate_window: 120e9 })
  for (const s of shards) {
    await jsm.consumers.add('SWEEP_WQ', {
      durable_name: `c${s}`, filter_subject: `wq.${s}`, ack_policy: AckPolicy.Explicit, ack_wait: 1e9, max_deliver: -1
    })
  }
  const js = jetstream(nc)
  const done = new Set<string>()
  let running = true
  let lastDelivery = Date.now()
  let n = 0
  const publisher = (async () => {
    while (running) {
      const batch = Array.from({ length: 20 }, async () => {
        const id = `m${n++}`
        await js.publish(`wq.${n % 4}`, enc.encode(id), { msgID: id, timeout: 1000 }).catch(() => {})
      })
      await Promise.all(batch)
      await sleep(20)
    }
  })()
  const workers = shards.map(async (s) => {
    const c = await js.consumers.get('SWEEP_WQ', `c${s}`)
    while (running || Date.now() - lastDelivery < 4000) {
      try {
        for await (const m of await c.fetch({ max_messages: 50, expires: 1000 })) {
          lastDelivery = Date.now()
          // a third of first deliveries come back later, as deferred mail does; the rest are finished
          if (m.info.deliveryCount === 1 && Math.random() < 0.3) { m.nak(200 + Math.floor(Math.random() * 800)); continue }
          const id = dec.decode(m.data)
          setTimeout(() => { done.add(id); m.ack() }, Math.random() * 20)
        }
      } catch { await sleep(100) }
    }
  })
  // each kill, and the end of the load, finds the workers finishing messages since the last restart
  const finishing = async (): Promise<void> => {
    const before = done.size
    await eventually(() => done.size >= before + 100, 'messages finished', 30_000)
  }
  for (let kill = 0; kill < 4; kill++) {
    await finishing()
    await nats.stop('SIGKILL')
    await sleep(500)
    await nats.start()
  }
  await finishing()
  running = false
  await publisher
  await Promise.all(workers)

  const left = await jsm.streams.info('SWEEP_WQ')
  const owed = await Promise.all(shards.map(async (s) => (await jsm.consumers.info('SWEEP_WQ', `c${s}`)).num_ack_pending))
  t.diagnostic(`${n} published, ${done.size} finished; before the sweep: ${left.state.messages} stored, ${owed.join('/')} un-acknowledged`)
  for (const s of shards) {
    assert.equal((await jsm.consumers.info('SWEEP_WQ', `c${s}`)).num_pending, 0, 'every message was delivered')
    const r = await sweepWorkQueue({ nc, jsm }, {
      stream: 'SWEEP_WQ', consumer: `c${s}`, subject: `wq.${s}`, settled: async (data) => done.has(dec.decode(data)), full: true
    })
    t.diagnostic(`shard ${s}: removed ${r.removed}, released ${r.released}`)
  }
  const after = await jsm.streams.info('SWEEP_WQ')
  assert.equal(after.state.messages, 0, 'every stored message was finished and is removed')
  for (const s of shards) {
    const c = await jsm.consumers.info('SWEEP_WQ', `c${s}`)
    assert.equal(c.num_ack_pending, 0, `c${s} owes nothing`)
  }
})
