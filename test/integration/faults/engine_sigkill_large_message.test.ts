import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { simpleParser } from 'mailparser'
import { openContentStore, type ContentStore } from '../../../stores/content/mod.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { EventWatcher } from '../../helpers/engine_env.ts'
import {
  closeAgent, killChild, messageIdHeader, nothingPending, send, sendBody, sinkCounts, startEngineChild, untilNothingPending
} from './fault_env.ts'
import { eventually } from '../../helpers/waiting.ts'

// A large message (content in the object store) on a stock nats-server (1 MB max_payload), with the engine
// SIGKILLed between its attempts: the content outlives the crash and the message is delivered once.
let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let key: string
let events: EventWatcher
let content: ContentStore
let engine: ChildProcess | undefined

const engineEnv = (): Record<string, string> => ({
  NATS_URL: nats.url, REDIS_URL: redis.url, OB_SMTP_RELAY: sink.url, OB_DELIVERY_RETRY_SCHEDULE: '3,3,3,3,3'
})

before(async () => {
  nats = await ServerProcess.nats({ stockMaxPayload: true })
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start()
  ob = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway', OB_DELIVERY_RETRY_SCHEDULE: '3,3,3,3,3' } })
  org = await ob.org()
  key = await ob.key(org, ['send'])
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
  content = await openContentStore(ob.proc.nc, ob.proc.config)
})
after(async () => {
  events.stop()
  if (engine !== undefined) await killChild(engine)
  await ob.close()
  await closeAgent()
  await sink.close()
  await nats.dispose()
  await redis.dispose()
})

test('an engine SIGKILLed while a 2 MB message waits for its retry: ' +
  'a new engine delivers it once, byte-exact, and deletes its content', { timeout: 120_000 }, async () => {
  engine = await startEngineChild(engineEnv())
  const attachment = randomBytes(2 * 1024 * 1024)
  const rcpt = 'tempfail1times-large@dest.example'
  const r = await send(ob.baseUrl, key, sendBody(org, rcpt, {
    attachments: [{ filename: 'big.bin', content: attachment.toString('base64'), content_type: 'application/octet-stream' }]
  }))
  assert.equal(r.status, 202, r.error)
  const id = r.id!
  await events.until(() => events.of(id, 'deferred').length === 1, 60_000)
  await killChild(engine)
  assert.equal(sink.to(rcpt).length, 0)
  assert.ok(await content.has(id), 'the content is kept while a recipient waits')

  engine = await startEngineChild(engineEnv())
  await events.until(() => events.of(id, 'delivered').length === 1, 60_000)
  await eventually(async () => !(await content.has(id)), 'content deleted', 10_000)
  const s = await untilNothingPending(nats.url)
  assert.ok(nothingPending(s), JSON.stringify(s))
  assert.equal(sinkCounts(sink).get(messageIdHeader(org, id)), 1)
  const parsed = await simpleParser(sink.to(rcpt)[0]!.raw)
  assert.ok(parsed.attachments[0]!.content.equals(attachment), 'attachment byte-exact')
  assert.equal(events.of(id, 'delivered').length, 1)
})
