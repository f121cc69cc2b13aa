import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { pino } from 'pino'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { AckPolicy, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import { ServerProcess } from '../../helpers/servers.ts'
import { eventually } from '../../helpers/waiting.ts'
import { ShardDispatcher } from '../../../engine/dispatcher.ts'
import { CLOCK_SKEW_MS } from '../../../engine/connection_epoch.ts'
import type { MessageProcessor } from '../../../engine/process_message.ts'

/**
 * A shard's pull loop against a real NATS server, with a processor that only records what it is handed: which
 * deliveries it reads the delivery state of first (a delivery count of 2 or more), and when.
 */
let nats: ServerProcess
let nc: NatsConnection
let jsm: JetStreamManager
const log = pino({ level: 'silent' })

before(async () => {
  nats = await ServerProcess.nats()
  nc = await connect({ servers: nats.url })
  jsm = await jetstreamManager(nc)
})
after(async () => {
  await nc.close()
  await nats.dispose()
})

interface Handed { body: string, count: number, at: number }

function recorder (): { processor: MessageProcessor, handed: Handed[] } {
  const handed: Handed[] = []
  const processor = {
    async process (_shard: number, data: Uint8Array, count: number) {
      handed.push({ body: new TextDecoder().decode(data), count, at: Date.now() })
      return { kind: 'ack' as const }
    }
  } as unknown as MessageProcessor
  return { processor, handed }
}

async function shardStream (name: string): Promise<void> {
  // limits retention, unlike the outbound stream: an acknowledged message stays, so the consumer can hand it again
  await jsm.streams.add({ name, subjects: [`${name}.>`] })
  await jsm.consumers.add(name, { durable_name: 'shard', ack_policy: AckPolicy.Explicit, ack_wait: 30_000_000_000 })
}

test('on a shard taken from a process whose lease ran out, a message that may have been handed out before waits ' +
  'until that process\'s sends have ended, then has its delivery state read', async () => {
  await shardStream('REPEATS_HELD')
  await jetstream(nc).publish('REPEATS_HELD.m', 'before the takeover')
  const { processor, handed } = recorder()
  const repeatsFrom = Date.now() + 1500
  const consumer = await jetstream(nc).consumers.get('REPEATS_HELD', 'shard')
  const d = new ShardDispatcher(0, consumer, processor, 4, 30_000, log, () => true, undefined, repeatsFrom)
  d.start()
  try {
    await eventually(() => handed.length === 1, 'the message handed to the processor', 10_000)
    assert.ok(handed[0]!.at >= repeatsFrom, `held until the previous owner's sends ended (${repeatsFrom - handed[0]!.at} ms early)`)
    assert.ok(handed[0]!.count >= 2, 'its delivery state is read')
  } finally {
    await d.drain(Date.now() + 1000)
  }
})

test('a shard that drains while a message waits for the previous owner hands it back unsent', async () => {
  await shardStream('REPEATS_DRAINED')
  await jetstream(nc).publish('REPEATS_DRAINED.m', 'before the takeover')
  const { processor, handed } = recorder()
  const consumer = await jetstream(nc).consumers.get('REPEATS_DRAINED', 'shard')
  const d = new ShardDispatcher(0, consumer, processor, 4, 30_000, log, () => true, undefined, Date.now() + 20_000)
  d.start()
  await eventually(async () => (await jsm.consumers.info('REPEATS_DRAINED', 'shard')).num_ack_pending === 1, 'the message in hand')
  const started = Date.now()
  await d.drain(Date.now() + 10_000)
  assert.ok(Date.now() - started < 5_000, 'the drain does not wait out the hold')
  assert.equal(handed.length, 0, 'nothing was processed')
  const back = await consumer.next({ expires: 5_000 })
  assert.equal(back?.string(), 'before the takeover', 'the message was handed back and goes to the next puller')
  back?.ack()
})

test('a first delivery at a sequence the shard was already handed, as from a consumer whose new leader had not ' +
  'learned what the old one handed out, has its delivery state read', async () => {
  await shardStream('REPEATS_BACK')
  const { processor, handed } = recorder()
  const consumer = await jetstream(nc).consumers.get('REPEATS_BACK', 'shard')
  const d = new ShardDispatcher(0, consumer, processor, 4, 30_000, log)
  d.start()
  try {
    // published after the shard was taken (and the allowance for clock skew): new for certain
    await new Promise((resolve) => setTimeout(resolve, CLOCK_SKEW_MS + 200))
    await jetstream(nc).publish('REPEATS_BACK.m', 'new')
    await eventually(() => handed.length === 1, 'the message handed to the processor', 10_000)
    assert.equal(handed[0]!.count, 1, 'a new message is sent without reading its state')
    await eventually(async () => (await jsm.consumers.info('REPEATS_BACK', 'shard')).num_ack_pending === 0, 'the acknowledgement')

    // the consumer goes back: it hands the same stream message out again as new, with a delivery count of 1
    await jsm.consumers.delete('REPEATS_BACK', 'shard')
    await jsm.consumers.add('REPEATS_BACK', { durable_name: 'shard', ack_policy: AckPolicy.Explicit, ack_wait: 30_000_000_000 })
    await eventually(() => handed.length === 2, 'the message handed again', 15_000)
    assert.ok(handed[1]!.count >= 2, 'the repeat has its delivery state read')
  } finally {
    await d.drain(Date.now() + 1000)
  }
})
