import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { JsMsg } from '@nats-io/jetstream'
import { EndpointQueue } from '../../../webhooks/endpoint_queue.ts'
import { batchSettles } from '../../../webhooks/settle.ts'
import { AckBatch } from '../../../webhooks/ack_batch.ts'
import { isJobRef, storedEventId, webhookJobsOf, webhookJobJson, type WebhookJob } from '../../../stores/webhooks/mod.ts'

const never = async (): Promise<void> => await new Promise<void>(() => {})
const unexpected = (err: unknown): void => { throw err }

function job (i: number): WebhookJob {
  return {
    event: { id: `evt_${i}`, type: 'delivered', timestamp: '2026-01-01T00:00:00.000Z', data: {} },
    org_id: 'org_1', webhook_id: 'wh_1', attempt: 1, due_at: 0, created_at: 0
  }
}

test('a new endpoint holds work in memory; once every slot hangs for a second it is stalled and takes nothing more', () => {
  const q = new EndpointQueue<number>(2, 1000, never, unexpected)
  const now = Date.now()
  assert.equal(q.canTake(1, now), true)
  q.offer(1)
  q.offer(2)
  assert.equal(q.freeSlots, 0)
  for (let i = 0; i < 3; i++) q.offer(3 + i)
  assert.equal(q.keepsPace(now), true, 'not judged before a second has passed')
  assert.equal(q.canTake(1, now), true)
  q.offer(6)
  assert.equal(q.canTake(1, now), false, 'before its first answer it holds about one round of its slots, no more')
  const later = now + 1500
  assert.equal(q.keepsPace(later), false)
  assert.equal(q.canTake(1, later), false, 'a stalled endpoint with no free slot takes nothing')
  assert.deepEqual(q.pacing(later), { waiting: 0, capacity: 0 }, 'a stalled endpoint never holds the fan-out back')
  assert.equal(q.retryLaterMs(later), 30_000)
})

test('once an endpoint has answered, its first second allows more waiting work while its pace is measured', async () => {
  let release!: () => void
  const first = new Promise<void>((resolve) => { release = resolve })
  let started = 0
  const q = new EndpointQueue<number>(2, 1000, async () => { if (started++ === 0) await first; else await never() }, unexpected)
  for (let i = 0; i < 6; i++) q.offer(i)
  assert.equal(q.canTake(1, Date.now()), false, 'no answer yet: two in flight and four waiting is the most it holds')
  release()
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(q.answered, true)
  assert.equal(q.canTake(1, Date.now()), true)
  for (let i = 0; i < 100; i++) q.offer(10 + i)
  assert.equal(q.canTake(1, Date.now()), true, 'a hundred waiting is within its first-second allowance')
})

test('an endpoint that does not keep pace still takes work into a free slot, and never more than its waiting limit', () => {
  const q = new EndpointQueue<number>(2, 3, never, unexpected)
  assert.equal(q.canTake(6, Date.now()), false, 'two slots and three waiting: six do not fit')
  assert.equal(q.canTake(5, Date.now()), true)
  q.offer(1)
  assert.equal(q.canTake(1, Date.now() + 5000), true, 'one slot is free')
})

test('an attempt that rejects is handed to the failure callback with its item, and its slot goes to the next item', async () => {
  const failures: Array<[string, number]> = []
  const ran: number[] = []
  const q = new EndpointQueue<number>(1, 10, async (i) => {
    ran.push(i)
    if (i === 1) throw new Error('damaged record')
  }, (err, i) => { failures.push([(err as Error).message, i]) })
  q.offer(1)
  q.offer(2)
  for (let i = 0; i < 5 && ran.length < 2; i++) await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(failures, [['damaged record', 1]])
  assert.deepEqual(ran, [1, 2])
  assert.equal(q.idle, true)
})

test('a job-stream message holds one job or a batch of jobs; anything else is refused', () => {
  assert.deepEqual(webhookJobsOf(job(1)), [job(1)])
  assert.deepEqual(webhookJobsOf({ jobs: [job(1), job(2)] }), [job(1), job(2)])
  assert.throws(() => webhookJobsOf({ jobs: [] }))
  assert.throws(() => webhookJobsOf({ jobs: [job(1), { nope: 1 }] }))
  assert.throws(() => webhookJobsOf('x'))
  assert.throws(() => webhookJobsOf(null))
})

test('a job serialised around its event\'s JSON reads back as the same job', () => {
  const j = { ...job(7), test: true }
  assert.deepEqual(JSON.parse(webhookJobJson(j, JSON.stringify(j.event))), j)
  assert.deepEqual(JSON.parse(webhookJobJson(j)), j)
  assert.deepEqual(webhookJobsOf(JSON.parse(`{"jobs":[${webhookJobJson(job(1))},${webhookJobJson(job(2))}]}`)), [job(1), job(2)])
})

test('a job whose OB_EVENTS sequence is known is stored naming its event, and reads back as that reference', () => {
  const j = { ...job(4), event_seq: 42 }
  const stored = webhookJobJson(j, JSON.stringify(j.event))
  assert.ok(!stored.includes('"event":'), 'the event itself is not stored')
  const [back] = webhookJobsOf(JSON.parse(`{"jobs":[${stored}]}`))
  assert.ok(back !== undefined && isJobRef(back))
  assert.deepEqual(back, { event_seq: 42, event_id: 'evt_4', org_id: 'org_1', webhook_id: 'wh_1', attempt: 1, due_at: 0, created_at: 0 })
  assert.equal(webhookJobJson(back), stored, 'a reference is stored again unchanged')
  assert.throws(() => webhookJobsOf({ event_seq: 'x', event_id: 'evt_4', org_id: 'org_1', webhook_id: 'wh_1', attempt: 1, due_at: 0 }))
})

test('a reference is written field by field only for plain ids; anything else reads back the same through JSON', () => {
  const plain = { ...job(5), event_seq: 9, due_at: 1_700_000_000_123, created_at: 1_700_000_000_000 }
  const odd = { ...plain, event: { ...plain.event, id: 'evt_"quoted"\\' }, org_id: 'org_Ä' }
  const tested = { ...plain, test: true }
  for (const j of [plain, odd, tested]) {
    const [back] = webhookJobsOf(JSON.parse(webhookJobJson(j)))
    const { event, event_seq: seq, ...rest } = j
    assert.deepEqual(back, { event_seq: seq, event_id: event.id, ...rest })
  }
})

function fakeMsg (): { m: JsMsg, acks: () => number, naks: () => number } {
  let acks = 0
  let naks = 0
  const m = { ack: () => { acks++ }, nak: () => { naks++ }, working: () => {} } as unknown as JsMsg
  return { m, acks: () => acks, naks: () => naks }
}

test('a batch message is acknowledged once every job in it is settled, after requeued jobs are stored', async () => {
  const { m, acks, naks } = fakeMsg()
  const stored: string[] = []
  const ackBatch = new AckBatch()
  const settles = batchSettles(m, [job(1), job(2), job(3)], async (j) => { stored.push(storedEventId(j)) }, ackBatch)
  settles[0]!.ack()
  settles[1]!.nak(1000)
  await new Promise((resolve) => setImmediate(resolve))
  ackBatch.flush()
  assert.equal(acks(), 0, 'one job is still open')
  assert.deepEqual(stored, ['evt_2'])
  settles[2]!.ack()
  ackBatch.flush()
  assert.equal(acks(), 1)
  assert.equal(naks(), 0)
})

test('when a job of a batch cannot be stored again, the whole batch is handed back and never acknowledged', async () => {
  const { m, acks, naks } = fakeMsg()
  const ackBatch = new AckBatch()
  const settles = batchSettles(m, [job(1), job(2)], async () => { throw new Error('stream unavailable') }, ackBatch)
  settles[0]!.nak(0)
  settles[1]!.ack()
  await new Promise((resolve) => setImmediate(resolve))
  ackBatch.flush()
  assert.equal(naks(), 1)
  assert.equal(acks(), 0)
})
