import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { pino } from 'pino'
import type { Redis } from 'ioredis'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { loadConfig, type Config } from '../../../config/mod.ts'
import { STREAM_EVENTS, eventId, eventRecord, eventSubject, streamSettings, type EventRecord } from '../../../protocol/mod.ts'
import { ensureStreams, connectRedis, redisReady } from '../../../stores/clients/mod.ts'
import { ControlPlane } from '../../../stores/control_plane/mod.ts'
import { OutboxMetrics } from '../../../stores/metrics/mod.ts'
import { ReputationGuard } from '../../../stores/reputation/mod.ts'
import { ServerProcess } from '../../helpers/servers.ts'

/**
 * The guard against a real JetStream that refuses its `stream.paused` event: the events stream stops taking the
 * organisation's subjects (as a full or cut-off JetStream refuses a publish), the window trips, and the pause must
 * not stay without its event.
 */
let nats: ServerProcess
let redisServer: ServerProcess
let nc: NatsConnection
let redis: Redis
let cp: ControlPlane
let config: Config

before(async () => {
  nats = await ServerProcess.nats()
  redisServer = await ServerProcess.redis()
  config = loadConfig({
    NATS_URL: nats.url, REDIS_URL: redisServer.url, OB_REPUTATION_MIN_VOLUME: '4', OB_REPUTATION_MAX_BOUNCE_PCT: '50'
  })
  nc = await connect({ servers: nats.url })
  await ensureStreams(nc, streamSettings(config))
  cp = await ControlPlane.open(nc, { replicas: 1 })
  redis = connectRedis(redisServer.url, 'test')
  await redisReady(redis)
})
after(async () => {
  redis.disconnect()
  cp.close()
  await nc.close()
  await Promise.all([nats.dispose(), redisServer.dispose()])
})

let n = 0
function hardBounce (org: string): EventRecord {
  const id = eventId('test-bounce', org, n++)
  const data = { recipient: `gone${n}@dest.example`, bounce_type: 'hard', reason: '550 5.1.1 no such user' }
  return eventRecord(id, 'bounced', org, data as never, `msg_${String(n).padStart(26, '0')}`)
}

test('a pause whose stream.paused JetStream refuses is taken back; the next outcome pauses again, with its event', async () => {
  const org = 'org_pausetold0000000000000000'
  const guard = new ReputationGuard(config, { redis, cp, js: jetstream(nc), log: pino({ level: 'silent' }), metrics: new OutboxMetrics() })
  const jsm = await jetstreamManager(nc)
  const events = await jsm.streams.info(STREAM_EVENTS)
  const subjects = events.config.subjects
  // the stream no longer takes the events' subjects: every publish of one is refused, as by a full or cut-off JetStream
  await jsm.streams.update(STREAM_EVENTS, { subjects: ['ob.nothing.>'] })
  try {
    for (let i = 0; i < 4; i++) await guard.observe(hardBounce(org))
    assert.equal(cp.pauses.paused(org, 'transactional'), undefined, 'no pause is left without its event')
  } finally {
    await jsm.streams.update(STREAM_EVENTS, { subjects })
  }
  await guard.observe(hardBounce(org))
  const pause = cp.pauses.paused(org, 'transactional')
  assert.ok(pause !== undefined, 'the next outcome pauses the stream')
  assert.equal(pause.reason, 'bounce_rate')
  const told = await jsm.streams.getMessage(STREAM_EVENTS, { last_by_subj: eventSubject(org, 'stream.paused') })
  assert.ok(told !== null)
  const event = told.json<EventRecord>()
  assert.equal(event.data.paused_at, pause.paused_at)
  assert.equal(event.data.stream, 'transactional')
})
