import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { Agent, fetch } from 'undici'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { GATEWAY_CHILD, spawnChild, stopChild, type Child } from '../../helpers/children.ts'
import { OUTBOUND_SUBJECTS } from '../../../protocol/mod.ts'
import { READ_MODEL_KEYS } from '../../../stores/read_model/message_store_keys.ts'
import { killChild, startEngineChild, untilDelivered } from './fault_env.ts'

/**
 * The gateway writes the read model after the 202, batched. A gateway killed in between leaves accepted messages
 * without a record; the engine records each one from the queued message when it delivers it, so every 202 still
 * becomes a readable, delivered message. The kill comes as JetStream stores a message of the burst (seen by a
 * plain subscriber on the outbound subjects), so messages stored but not yet recorded are certain: every one
 * of them, answered 202 or not, must become readable and be delivered.
 */
const BURST = 600
const KILL_AT = 300 // messages stored
const CONCURRENCY = 64

let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let admin: TestOutbox
let org: TestOrg
let key: string
let gateway: Child | undefined
let engine: ChildProcess | undefined
const agent = new Agent({ keepAliveTimeout: 1000, connections: CONCURRENCY })

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start({ keepRaw: false })
  // this process writes the organisation and reads the messages back; it neither sends nor delivers
  admin = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway', OB_ENTERPRISE_RATE_LIMIT: '1000000' } })
  org = await admin.org('enterprise')
  key = await admin.key(org, ['send', 'read'])
})
after(async () => {
  if (gateway !== undefined) await stopChild(gateway, 'SIGKILL')
  if (engine !== undefined) await killChild(engine)
  await agent.close().catch(() => {})
  await admin.close()
  await sink.close()
  await nats.dispose()
  await redis.dispose()
})

test('a gateway SIGKILLed right after a burst of 202s leaves every accepted message readable ' +
  'and delivered', { timeout: 120_000 }, async (t) => {
  gateway = await spawnChild(GATEWAY_CHILD, {
    NATS_URL: nats.url, REDIS_URL: redis.url, OB_DOMAIN_VERIFICATION: 'off', OB_SMTP_INBOUND_PORT: '0', OB_ENTERPRISE_RATE_LIMIT: '1000000'
  })
  const victim = gateway
  const stored = new Set<string>()
  const sub = admin.proc.nc.subscribe(OUTBOUND_SUBJECTS, {
    callback: (_err, m) => {
      stored.add(m.json<{ id: string }>().id)
      if (stored.size === KILL_AT) victim.process.kill('SIGKILL')
    }
  })
  await admin.proc.nc.flush()
  const accepted: string[] = []
  let next = 0
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < BURST) {
      const i = next++
      try {
        const res = await fetch(`http://127.0.0.1:${victim.port!}/v1/messages/send`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            from: `App <hello@${org.domain}>`, to: `r${i}@dest.example`, subject: `Order ${i}`, text: 'Shipped',
            track_opens: false, track_clicks: false
          })
        })
        const body = await res.json() as { id?: string }
        if (res.status !== 202) continue
        accepted.push(body.id!)
      } catch {
        // the gateway is gone; the requests still open fail
      }
    }
  }))
  await stopChild(victim, 'SIGKILL')
  gateway = undefined
  await admin.proc.nc.flush()
  sub.unsubscribe()
  assert.ok(stored.size >= KILL_AT, `${stored.size} stored`)
  for (const id of accepted) assert.ok(stored.has(id), `${id} was answered 202 and is stored`)
  const all = [...stored]

  const pipe = admin.proc.redis.pipeline()
  for (const id of all) pipe.hexists(READ_MODEL_KEYS.message(org.orgId, id), 'summary')
  const unrecorded = (await pipe.exec())!.filter(([, found]) => found !== 1).length
  t.diagnostic(`${stored.size} stored (${accepted.length} answered 202) before the kill; ` +
    `${unrecorded} had no read-model record when the gateway died`)

  engine = await startEngineChild({ NATS_URL: nats.url, REDIS_URL: redis.url, OB_SMTP_RELAY: sink.url })
  await untilDelivered(sink, org, all, 90_000)
  const missing: string[] = []
  for (const id of all) {
    const r = await admin.request('GET', `/v1/messages/${id}`, { key })
    if (r.status !== 200) missing.push(`${id} ${r.status}`)
  }
  assert.deepEqual(missing, [], 'every accepted message is readable')
})
