import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DeliveryState } from '../../../engine/delivery_state.ts'
import { acceptedIds, closeAgent, killChild, sendMany, sinkCounts, startEngineChild, untilDelivered } from './fault_env.ts'

/**
 * The bound on SMTP transactions repeated after an engine is killed (docs/reliability.md): only a transaction whose
 * 250 had reached the SMTP server but was not yet in the message's delivery state when the engine died is sent
 * again. After each SIGKILL, before another engine starts, every message the server has is looked up in the
 * delivery state; a message sent twice must be one found there without its reply.
 */
const COUNT = 400
const KILLS = 4

let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let key: string
let engine: ChildProcess | undefined

const engineEnv = (): Record<string, string> => ({ NATS_URL: nats.url, REDIS_URL: redis.url, OB_SMTP_RELAY: sink.url })

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start({ keepRaw: false })
  ob = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway' } })
  org = await ob.org()
  key = await ob.key(org, ['send'])
})
after(async () => {
  if (engine !== undefined) await killChild(engine)
  await ob.close()
  await closeAgent()
  await sink.close()
  await nats.dispose()
  await redis.dispose()
})

const idOf = (messageId: string): string => messageId.slice(1, messageId.indexOf('@'))

/** Messages at the SMTP server whose recipient has neither a recorded reply nor a final outcome in the delivery state. */
async function unrecorded (state: DeliveryState): Promise<string[]> {
  const out: string[] = []
  for (const m of sink.messages) {
    const s = (await state.load(idOf(m.messageId))).get(m.rcptTo[0]!.toLowerCase())
    if (s?.sent === undefined && s?.final === undefined) out.push(m.messageId)
  }
  return out
}

test('engine SIGKILLs under load: a message is sent twice only if its reply was not recorded ' +
  'when the engine died', { timeout: 240_000 }, async (t) => {
  const state = new DeliveryState(ob.proc.redis)
  engine = await startEngineChild(engineEnv())
  const sending = sendMany(ob.baseUrl, key, org, COUNT, (i) => `r${i}@dest.example`, 8, 0)
  const inFlight = new Set<string>()
  const perKill: number[] = []
  for (let k = 1; k <= KILLS; k++) {
    await sink.until(() => sink.accepted >= k * Math.floor(COUNT / (KILLS + 2)), 60_000)
    await killChild(engine)
    const open = await unrecorded(state)
    perKill.push(open.length)
    for (const id of open) inFlight.add(id)
    engine = await startEngineChild(engineEnv())
  }
  const ids = acceptedIds(await sending)
  assert.equal(ids.length, COUNT)
  await untilDelivered(sink, org, ids, 120_000)
  const duplicated = [...sinkCounts(sink)].filter(([, n]) => n > 1).map(([id]) => id)
  t.diagnostic(`SMTP transactions ${sink.messages.length}; unrecorded at each kill ${perKill.join(', ')}; duplicated ${duplicated.length}`)
  assert.deepEqual(duplicated.filter((id) => !inFlight.has(id)), [], 'sent twice though its reply was recorded before the kill')
  assert.ok(duplicated.length <= inFlight.size)
  await killChild(engine, 'SIGTERM')
  engine = undefined
})
