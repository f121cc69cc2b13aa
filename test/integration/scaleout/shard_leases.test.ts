import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { pino } from 'pino'
import { ServerProcess } from '../../helpers/servers.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import type { KV } from '@nats-io/kv'
import { LeaseTable, ShardFences, openLeaseBucket, type LeaseBucket, type LeaseRecord } from '../../../engine/leases/mod.ts'

const UNITS = 4
const LEASE_MS = 1500
const RENEW_MS = 500
const log = pino({ level: 'silent' })
const dec = new TextDecoder()

let nats: ServerProcess
const conns: NatsConnection[] = []

before(async () => { nats = await ServerProcess.nats() })
after(async () => {
  for (const nc of conns) await nc.close().catch(() => {})
  await nats.dispose()
})

/** One lease participant on its own connection, recording what the table asked it to start and stop. */
class Participant {
  readonly started: number[] = []
  readonly stopped: number[] = []
  readonly fences = new Map<number, () => boolean>()
  /** Until when work in hand may still send, as the shard threads read it. */
  readonly sendFences = new ShardFences(UNITS)
  table!: LeaseTable
  /** `drain`: what stopping a unit waits for (its work in hand finishing). */
  constructor (readonly id: string, readonly nc: NatsConnection, readonly bucket: LeaseBucket, group: string,
    drain: () => Promise<void> = async () => {}) {
    this.table = new LeaseTable(bucket, {
      group, units: UNITS, ownerId: id, leaseMs: LEASE_MS, renewMs: RENEW_MS, drainMs: 1000, log, fences: this.sendFences,
      start: (unit, fence) => { this.started.push(unit); this.fences.set(unit, fence) },
      stop: async (unit) => { this.stopped.push(unit); await drain() }
    })
  }

  get kv (): KV { return this.bucket.kv }

  static async join (id: string, group: string, drain?: () => Promise<void>): Promise<Participant> {
    const nc = await connect({ servers: nats.url })
    conns.push(nc)
    const p = new Participant(id, nc, await openLeaseBucket(nc, 1, 1000), group, drain)
    await p.table.start()
    return p
  }
}

async function owners (kv: KV, group: string): Promise<Array<string | null>> {
  const out: Array<string | null> = []
  for (let u = 0; u < UNITS; u++) {
    const e = await kv.get(`${group}.shard.${u}`)
    out.push(e === null || e.operation !== 'PUT' ? null : (JSON.parse(dec.decode(e.value)) as LeaseRecord).owner)
  }
  return out
}

test('a lone engine claims every shard and renews the leases', async () => {
  const a = await Participant.join('a', 'g1')
  assert.deepEqual(a.table.units(), [0, 1, 2, 3])
  assert.deepEqual(await owners(a.kv, 'g1'), ['a', 'a', 'a', 'a'])
  const before = (await a.kv.get('g1.shard.0'))!.revision
  await eventually(async () => (await a.kv.get('g1.shard.0'))!.revision > before, 'a renew')
  assert.ok(a.fences.get(0)!(), 'the holder may pull')
  assert.ok(a.sendFences.open(0), 'and send')
  assert.ok(!a.sendFences.open(0, Date.now() + LEASE_MS), 'but not past its term: another may hold the lease by then')
  await a.table.close(Date.now() + 1000)
  assert.ok([0, 1, 2, 3].every((u) => !a.sendFences.open(u)), 'closed: nothing more is sent')
})

test('a second engine joining gets half the shards; the first drains and releases its surplus', async () => {
  const a = await Participant.join('a', 'g2')
  const b = await Participant.join('b', 'g2')
  await eventually(() => a.table.units().length === 2 && b.table.units().length === 2, 'two shards each')
  const o = await owners(a.kv, 'g2')
  assert.equal(o.filter((x) => x === 'a').length, 2)
  assert.equal(o.filter((x) => x === 'b').length, 2)
  for (const u of b.table.units()) {
    assert.ok(a.stopped.includes(u), `shard ${u} was drained by a before b took it`)
    assert.equal(a.fences.get(u)!(), false, `a no longer pulls shard ${u}`)
    assert.equal(a.sendFences.open(u), false, `nor sends its mail: ${u}`)
    assert.equal(b.sendFences.open(u), true, `b does: ${u}`)
  }
  await a.table.close(Date.now() + 1000)
  await b.table.close(Date.now() + 1000)
})

test('three engines over four shards hold 2, 1 and 1: the shares add up, none is idle', async () => {
  const ps = [await Participant.join('a', 'g6'), await Participant.join('b', 'g6'), await Participant.join('c', 'g6')]
  await eventually(() => ps.map((p) => p.table.units().length).join() === '2,1,1', 'shares 2/1/1')
  assert.equal((await owners(ps[0]!.kv, 'g6')).filter((o) => o !== null).length, UNITS)
  for (const p of ps) await p.table.close(Date.now() + 1000)
})

test('a lease whose revision moved is lost at the next renew: the holder stops pulling', async () => {
  const a = await Participant.join('a', 'g3')
  const e = (await a.kv.get('g3.shard.1'))!
  await a.kv.update('g3.shard.1', new TextEncoder().encode(JSON.stringify({ owner: 'intruder', expires_at: Date.now() + 60_000 })),
    e.revision)
  await eventually(() => !a.table.units().includes(1), 'a lost shard 1')
  assert.equal(a.fences.get(1)!(), false)
  assert.equal(a.sendFences.open(1), false, 'the mail in hand of a lost shard is not sent')
  assert.equal(a.sendFences.open(0), true)
  assert.ok(a.stopped.includes(1))
  assert.deepEqual(await owners(a.kv, 'g3'), ['a', 'intruder', 'a', 'a'])
  await a.table.close(Date.now() + 1000)
})

test('an engine that stops renewing fences itself; the survivor takes its shards once the leases expire', async () => {
  const a = await Participant.join('a', 'g4')
  const b = await Participant.join('b', 'g4')
  await eventually(() => a.table.units().length === 2 && b.table.units().length === 2, 'balanced')
  const bShards = b.table.units()
  await b.nc.close() // b is cut off: its renews fail from now on, as if it crashed or was partitioned
  const cutAt = Date.now()
  await eventually(() => bShards.every((u) => !b.fences.get(u)!()), 'b fenced')
  await eventually(() => bShards.every((u) => !b.sendFences.open(u)), 'b sends none of its mail in hand')
  await eventually(() => a.table.units().length === 4, 'a holds all four', 10_000)
  const takeoverMs = Date.now() - cutAt
  assert.ok(takeoverMs >= LEASE_MS - RENEW_MS, `not before the lease term ran out (${takeoverMs} ms)`)
  assert.deepEqual(await owners(a.kv, 'g4'), ['a', 'a', 'a', 'a'])
  await a.table.close(Date.now() + 1000)
  await b.table.close(Date.now() + 100)
})

test('close drains every shard, deletes the leases, and another engine claims them at once', async () => {
  const a = await Participant.join('a', 'g5')
  await a.table.close(Date.now() + 1000)
  assert.deepEqual(a.stopped.sort(), [0, 1, 2, 3])
  assert.deepEqual(await owners(a.kv, 'g5'), [null, null, null, null])
  const c = await Participant.join('c', 'g5')
  assert.deepEqual(c.table.units(), [0, 1, 2, 3], 'claimed in the first round, without waiting for an expiry')
  await c.table.close(Date.now() + 1000)
})

test('a closing engine renews its leases until its work in hand is done: nobody takes a shard meanwhile', async () => {
  let finish!: () => void
  const inHand = new Promise<void>((resolve) => { finish = resolve })
  const a = await Participant.join('a', 'g7', async () => await inHand)
  const closing = a.table.close(Date.now() + 60_000)
  const b = await Participant.join('b', 'g7')
  await nothingHappensFor(2 * LEASE_MS) // two lease terms: unrenewed leases would have expired
  assert.deepEqual(await owners(a.kv, 'g7'), ['a', 'a', 'a', 'a'], 'still a\'s')
  assert.deepEqual(b.table.units(), [])
  assert.ok([0, 1, 2, 3].every((u) => a.sendFences.open(u)), 'a\'s mail in hand may still be sent')
  finish()
  await closing
  assert.ok([0, 1, 2, 3].every((u) => !a.sendFences.open(u)))
  await eventually(() => b.table.units().length === UNITS, 'b takes every shard once a is done')
  await b.table.close(Date.now() + 1000)
})
