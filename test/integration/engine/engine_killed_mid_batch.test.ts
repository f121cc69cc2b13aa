import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually } from '../../helpers/waiting.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'
import type { QueuedMessage } from '../../../protocol/mod.ts'

const CHILD = fileURLToPath(new URL('../../helpers/engine_child.js', import.meta.url))
const COUNT = 200

let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher
let child: ChildProcess | undefined

async function startEngineChild (): Promise<ChildProcess> {
  const c = spawn(process.execPath, [CHILD], {
    env: {
      PATH: process.env.PATH,
      NATS_URL: nats.url,
      REDIS_URL: redis.url,
      OB_SMTP_RELAY: sink.url,
      OB_ENGINE_ACK_WAIT_MS: '2000', // messages held by the killed engine come back after 2 s
      OB_SHUTDOWN_TIMEOUT_MS: '2000'
    },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  await new Promise<void>((resolve, reject) => {
    c.stdout!.on('data', (b: Buffer) => { if (b.toString().includes('ready')) resolve() })
    c.once('exit', (code) => reject(new Error(`engine child exited with ${code}`)))
  })
  return c
}

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start({ keepRaw: false })
  // this process only writes the control plane and watches events; the engine runs in the child
  ob = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway' } })
  org = await ob.org()
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  if (child !== undefined && child.exitCode === null) child.kill('SIGKILL')
  await ob.close()
  await sink.close()
  await nats.dispose()
  await redis.dispose()
})

test('an engine killed with SIGKILL mid-batch loses nothing; duplicates only for mail the sink had already accepted', async (t) => {
  child = await startEngineChild()
  const msgs: QueuedMessage[] = []
  for (let i = 0; i < COUNT; i++) msgs.push(queuedMessage(org, { to: [`r${i}@dest.example`], track_opens: false, track_clicks: false }))
  await Promise.all(msgs.map(async (m) => await publishQueued(ob.proc.nc, ob.proc.config, m)))
  await sink.until(() => sink.accepted >= 40)
  const killed = child
  await new Promise<void>((resolve) => { killed.once('exit', () => resolve()); killed.kill('SIGKILL') })
  // the sink records the transactions whose data it had, until the killed engine's sessions close there
  await eventually(() => sink.openSessions.size === 0, 'the killed engine\'s SMTP sessions to close at the sink')
  const acceptedBeforeKill = new Set(sink.messages.map((m) => m.messageId))
  assert.ok(acceptedBeforeKill.size < COUNT, 'the kill happened mid-batch')

  child = await startEngineChild()
  const ids = new Set(msgs.map((m) => `<${m.id}@${org.domain}>`))
  await sink.until(() => [...ids].every((id) => sink.messages.some((m) => m.messageId === id)), 60_000)

  const counts = new Map<string, number>()
  for (const m of sink.messages) counts.set(m.messageId, (counts.get(m.messageId) ?? 0) + 1)
  const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => id)
  t.diagnostic(`accepted before kill: ${acceptedBeforeKill.size}, total accepted: ${sink.messages.length}, ` +
    `duplicated: ${duplicates.length}`)
  for (const id of ids) assert.ok((counts.get(id) ?? 0) >= 1, `${id} reached the sink`)
  for (const id of duplicates) {
    assert.ok(acceptedBeforeKill.has(id), `${id} was sent twice although the sink had not accepted it before the kill`)
  }

  await events.until(() => msgs.every((m) => events.of(m.id, 'delivered').length >= 1), 30_000)
  for (const m of msgs) {
    assert.equal(events.of(m.id, 'delivered').length, 1, 'one delivered event per message, duplicates deduplicated by id')
  }
  await new Promise<void>((resolve) => { child!.once('exit', () => resolve()); child!.kill('SIGTERM') })
})
