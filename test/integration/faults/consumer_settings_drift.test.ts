import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox } from '../../helpers/outbox.ts'
import { loadConfig } from '../../../config/mod.ts'
import { NS_PER_MS, jetStreamSettings, jetStreamTable, type ConsumerSpec } from '../../../protocol/jetstream_table.ts'

// Streams and consumers left by an older version (here: every consumer with a 5 s ack_wait and 100 pending
// acks at most, the inbound one without its backoff) are brought to the current settings by the next start, whichever part owns them.

const ENV = { OB_ROLE: 'all', OB_ENGINE_SHARDS: '2', OB_ENGINE_ACK_WAIT_MS: '45000', OB_WEBHOOK_TIMEOUT_MS: '7000' }
const OLD_ACK_WAIT = 5000 * NS_PER_MS
let nats: ServerProcess
let redis: ServerProcess
let ob: TestOutbox | undefined

function drifted ({ config }: ConsumerSpec): ConsumerSpec['config'] {
  const { backoff: _b, ...rest } = config
  return { ...rest, ack_wait: OLD_ACK_WAIT, max_ack_pending: 100 }
}

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
})
after(async () => {
  await ob?.close()
  await nats.dispose()
  await redis.dispose()
})

test('a start brings every existing consumer to the table\'s settings', async () => {
  const table = jetStreamTable(jetStreamSettings(loadConfig({ NATS_URL: nats.url, REDIS_URL: redis.url, ...ENV })))
  const nc = await connect({ servers: nats.url })
  try {
    const jsm = await jetstreamManager(nc)
    for (const s of table.streams) await jsm.streams.add(s.config)
    for (const c of table.consumers) {
      await jsm.consumers.add(c.stream, drifted(c))
      assert.equal((await jsm.consumers.info(c.stream, c.config.durable_name)).config.ack_wait, OLD_ACK_WAIT)
    }
    ob = await TestOutbox.start({ nats, redis, env: ENV })
    const stale: string[] = []
    for (const c of table.consumers) {
      const got = (await jsm.consumers.info(c.stream, c.config.durable_name)).config
      const want = c.config
      if (got.ack_wait !== want.ack_wait) {
        stale.push(`${c.config.durable_name}: ack_wait ${got.ack_wait! / NS_PER_MS} ms, want ${want.ack_wait! / NS_PER_MS} ms`)
      }
      if ((got.max_ack_pending ?? -1) !== (want.max_ack_pending ?? got.max_ack_pending ?? -1)) {
        stale.push(`${c.config.durable_name}: max_ack_pending ${got.max_ack_pending}`)
      }
      if ((got.max_deliver ?? -1) !== (want.max_deliver ?? -1)) stale.push(`${c.config.durable_name}: max_deliver ${got.max_deliver}`)
      if (JSON.stringify(got.backoff ?? []) !== JSON.stringify(want.backoff ?? [])) {
        stale.push(`${c.config.durable_name}: backoff ${JSON.stringify(got.backoff ?? [])}`)
      }
    }
    assert.deepEqual(stale, [])
  } finally {
    await nc.close()
  }
})
