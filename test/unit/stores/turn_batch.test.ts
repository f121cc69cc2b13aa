import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'
import { ItemFailure, TurnBatch } from '../../../stores/batching/mod.ts'

/** A batch whose flush doubles each item and keeps what it was given. */
function doubling (opts: { maxItems?: number, after?: 'turn' | number } = {}): { batch: TurnBatch<number, number>, sent: number[][] } {
  const sent: number[][] = []
  const batch = new TurnBatch<number, number>({ ...opts, flush: async (items) => { sent.push(items); return items.map((n) => 2 * n) } })
  return { batch, sent }
}

test('the items of one turn leave as one flush, in order, and each caller gets its own result', async () => {
  const { batch, sent } = doubling()
  const answers = Promise.all([1, 2, 3].map(async (n) => await batch.add(n)))
  assert.deepEqual(sent, [], 'nothing leaves before the turn ends')
  assert.equal(batch.pending, 3)
  assert.deepEqual(await answers, [2, 4, 6])
  assert.deepEqual(sent, [[1, 2, 3]])
  assert.deepEqual(await batch.add(4), 8)
  assert.deepEqual(sent, [[1, 2, 3], [4]], 'a later turn is another batch')
})

test('a batch that reaches maxItems leaves at once, synchronously; the rest waits for the turn', async () => {
  const { batch, sent } = doubling({ maxItems: 2 })
  const answers = [1, 2, 3].map(async (n) => await batch.add(n))
  assert.deepEqual(sent, [[1, 2]])
  assert.deepEqual(await Promise.all(answers), [2, 4, 6])
  assert.deepEqual(sent, [[1, 2], [3]])
})

test('an ItemFailure rejects its caller alone; a failed flush rejects every caller of that batch with its error', async () => {
  const failed = new Error('redis down')
  let fail = false
  const batch = new TurnBatch<number, number>({
    flush: async (items) => {
      if (fail) throw failed
      return items.map((n) => n < 0 ? new ItemFailure(new Error(`bad ${n}`)) : n)
    }
  })
  const [a, b] = await Promise.allSettled([batch.add(1), batch.add(-1)])
  assert.deepEqual(a, { status: 'fulfilled', value: 1 })
  assert.equal(b.status === 'rejected' && (b.reason as Error).message, 'bad -1')
  fail = true
  const all = await Promise.allSettled([batch.add(1), batch.add(2)])
  assert.deepEqual(all.map((s) => s.status === 'rejected' && s.reason), [failed, failed])
})

test('a flush that throws synchronously rejects its callers too', async () => {
  const batch = new TurnBatch<number, number>({ flush: (): Promise<number[]> => { throw new Error('no connection') } })
  await assert.rejects(batch.add(1), /no connection/)
})

test('with a delay in ms the batch gathers across turns until its timer', async () => {
  const { batch, sent } = doubling({ after: 30 })
  const first = batch.add(1)
  await nextTurn()
  const second = batch.add(2)
  await nextTurn()
  assert.deepEqual(sent, [], 'still gathering after two turns')
  assert.deepEqual(await Promise.all([first, second]), [2, 4])
  assert.deepEqual(sent, [[1, 2]])
})

test('flush() sends what is gathered now; close() also waits for the batches sent', async () => {
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  const sent: number[][] = []
  const batch = new TurnBatch<number, number>({ after: 60_000, flush: async (items) => { sent.push(items); await held; return items } })
  const one = batch.add(1)
  batch.flush()
  assert.deepEqual(sent, [[1]], 'sent without waiting for the timer')
  const two = batch.add(2)
  let closed = false
  const closing = batch.close().then(() => { closed = true })
  assert.deepEqual(sent, [[1], [2]])
  await sleep(10)
  assert.equal(closed, false, 'close waits for the answers')
  release()
  await closing
  assert.deepEqual(await Promise.all([one, two]), [1, 2])
})

test('maxWeight: an item that would take the batch past it sends the batch first; one that reaches it sends at once', async () => {
  const sent: number[][] = []
  const batch = new TurnBatch<number, number>({
    after: 60_000, maxWeight: 10, weigh: (n) => n, flush: async (items) => { sent.push(items); return items }
  })
  const pending = [batch.add(4), batch.add(5)]
  assert.deepEqual(sent, [], '9 of 10: still gathering')
  pending.push(batch.add(3))
  assert.deepEqual(sent, [[4, 5]], 'the batch of 9 left before the item that would make it 12')
  pending.push(batch.add(7))
  assert.deepEqual(sent, [[4, 5], [3, 7]], 'a batch that weighs exactly the limit leaves at once')
  pending.push(batch.add(25))
  assert.deepEqual(sent, [[4, 5], [3, 7], [25]], 'an item heavier than the limit leaves alone')
  assert.deepEqual(await Promise.all(pending), [4, 5, 3, 7, 25])
  assert.equal(batch.pending, 0)
})
