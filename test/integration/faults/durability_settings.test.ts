import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { queuedMessage } from '../../helpers/engine_env.ts'
import { DEFAULT_RETRY } from '../../../client/src/mod.ts'
import { EnvSchema } from '../../../config/schema.ts'
import { natsConfigText } from '../../../cli/embedded_services.ts'
import { parseNatsVersion, supportsSyncAlways } from '../../../cli/binaries.ts'
import { NS_PER_MS, STREAM_OUTBOUND, STREAM_EVENTS, outboundConsumer, outboundSubject } from '../../../protocol/mod.ts'

// The in-progress side of durability (a slow SMTP server past ack_wait gets one transaction, kept alive with
// working()) is proven by test/integration/engine/slow_server_single_delivery.test.ts.

let nats: ServerProcess
let redis: ServerProcess
let ob: TestOutbox
let org: TestOrg

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  ob = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'all', OB_ENGINE_ACK_WAIT_MS: '3000' } })
  org = await ob.org()
})
after(async () => {
  await ob.close()
  await nats.dispose()
  await redis.dispose()
})

test('OB_OUTBOUND dedupes by Nats-Msg-Id for longer than the slowest client retry sequence', async () => {
  const jsm = await jetstreamManager(ob.proc.nc)
  const info = await jsm.streams.info(STREAM_OUTBOUND)
  const windowMs = info.config.duplicate_window / NS_PER_MS
  // Worst case of a client retrying one send: every attempt waits the longest publish timeout the gateway can be
  // configured with, and every pause is the longest Retry-After the client honours.
  const maxPublishTimeoutMs = (EnvSchema.properties.OB_PUBLISH_TIMEOUT_MS as unknown as { maximum: number }).maximum
  const worstRetryMs = DEFAULT_RETRY.maxAttempts * maxPublishTimeoutMs + (DEFAULT_RETRY.maxAttempts - 1) * DEFAULT_RETRY.maxRetryAfterMs
  assert.ok(windowMs >= worstRetryMs, `duplicate window ${windowMs} ms < worst retry sequence ${worstRetryMs} ms`)
  assert.ok(windowMs >= DEFAULT_RETRY.maxAttempts * ob.proc.config.nats.publishTimeoutMs)
  assert.equal(info.config.storage, 'file')
  assert.equal(info.config.retention, 'workqueue')
  const events = await jsm.streams.info(STREAM_EVENTS)
  assert.ok(events.config.duplicate_window > 0, 'events dedupe by their deterministic id')
})

test('a publish repeated with the same Nats-Msg-Id is stored once', async () => {
  // A sandbox message, so the engine that consumes it sends nothing; the PubAcks tell what JetStream stored.
  const js = jetstream(ob.proc.nc)
  const m = queuedMessage(org, { to: ['dup@dest.example'], environment: 'test' })
  const body = JSON.stringify(m)
  const first = await js.publish(outboundSubject(0), body, { msgID: m.id })
  const second = await js.publish(outboundSubject(0), body, { msgID: m.id })
  assert.equal(first.duplicate, false)
  assert.equal(second.duplicate, true)
  assert.equal(second.seq, first.seq)
})

test('shard consumers: explicit acks, ack_wait from OB_ENGINE_ACK_WAIT_MS, never dropped after N deliveries', async () => {
  const jsm = await jetstreamManager(ob.proc.nc)
  for (let shard = 0; shard < ob.proc.config.engine.shards; shard++) {
    const c = await jsm.consumers.info(STREAM_OUTBOUND, outboundConsumer(shard))
    assert.equal(c.config.ack_policy, 'explicit')
    assert.equal(c.config.ack_wait, 3000 * NS_PER_MS)
    assert.equal(c.config.max_deliver ?? -1, -1)
  }
})

test('the embedded NATS config asks for fsync before every acknowledgement on NATS 2.10 and later', () => {
  const conf = (version: string): string => natsConfigText({
    host: '127.0.0.1', port: 4222, storeDir: '/var/lib/outbox/nats', syncAlways: supportsSyncAlways(parseNatsVersion(version))
  })
  assert.match(conf('nats-server: v2.10.22\n'), /^\s*sync_interval: always$/m)
  assert.match(conf('nats-server: v2.11.0\n'), /^\s*sync_interval: always$/m)
  assert.doesNotMatch(conf('nats-server: v2.9.25\n'), /sync_interval/)
  assert.match(conf('nats-server: v2.10.22\n'), /jetstream \{[^}]*store_dir: "\/var\/lib\/outbox\/nats"[^}]*sync_interval: always[^}]*\}/s)
})
