import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { ServerProcess } from '../../helpers/servers.ts'
import { SentinelSet } from '../../helpers/redis_sentinel.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { PLAN_RATE_LIMITS } from '../../../protocol/mod.ts'

/**
 * Outbox (gateway and engine) on REDIS_URL=redis+sentinel://…: one master, one replica, three sentinels.
 * The master is killed with SIGKILL while two streams of sends run; the sentinels promote the replica and
 * Outbox follows it. Every 202 must reach the SMTP sink exactly once, and a rate-limited key must not get
 * more 202s than its bucket allows across the failover.
 */
const SENDERS = 2

let nats: ServerProcess
let set: SentinelSet
let sink: SmtpSink
let ob: TestOutbox

before(async () => {
  nats = await ServerProcess.nats()
  set = await SentinelSet.start()
  sink = await SmtpSink.start({ keepRaw: false })
  ob = await TestOutbox.start({
    nats,
    redis: set.master,
    env: {
      REDIS_URL: set.url, OB_ROLE: 'all', OB_SMTP_RELAY: sink.url, OB_DELIVERY_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1',
      OB_ENGINE_ACK_WAIT_MS: '3000'
    }
  })
})
after(async () => {
  await ob?.close()
  await sink?.close()
  await set?.dispose()
  await nats?.dispose()
})

interface Outcome { status: number, id?: string, at: number }

function mail (org: TestOrg, i: number): Record<string, unknown> {
  return { from: `App <hello@${org.domain}>`, to: `r${i}@dest.example`, subject: `Hello ${i}`, text: 'Hi' }
}

async function send (key: string, org: TestOrg, i: number): Promise<Outcome> {
  const r = await ob.request('POST', '/v1/messages/send', { key, body: mail(org, i) }).catch(() => ({ status: 0, body: undefined }))
  return { status: r.status, ...(r.status === 202 ? { id: (r.body as { id: string }).id } : {}), at: Date.now() }
}

test('a Sentinel failover under sends: every 202 is delivered exactly once and rate limits stay exact', async (t) => {
  assert.equal(ob.proc.config.redis.target.kind, 'sentinel')
  const volume = await ob.org('pro')
  const volumeKey = await ob.key(volume, ['send'])
  const limited = await ob.org('free')
  const limitedKey = await ob.key(limited, ['send'])
  const perMinute = PLAN_RATE_LIMITS.free

  const volumeOutcomes: Outcome[] = []
  const limitedOutcomes: Outcome[] = []
  let stop = false
  let n = 0
  const senders = Array.from({ length: SENDERS }, async () => {
    while (!stop) volumeOutcomes.push(await send(volumeKey, volume, n++))
  })
  const limitedSender = (async () => {
    while (!stop) limitedOutcomes.push(await send(limitedKey, limited, n++))
  })()
  const accepted = (list: Outcome[]): Outcome[] => list.filter((o) => o.status === 202)

  let oldMaster = 0
  let killedAt = 0
  let promotedAt = 0
  let acceptedAtPromotion = 0
  const statuses = (list: Outcome[]): string => JSON.stringify(Object.fromEntries([...new Set(list.map((o) => o.status))]
    .map((s) => [s, list.filter((o) => o.status === s).length])))
  const report = (): void => t.diagnostic(`master ${oldMaster} killed; ` +
    `replica ${set.replica.port} promoted after ${promotedAt - killedAt} ms; ` +
    `volume key ${statuses(volumeOutcomes)} (${acceptedAtPromotion} accepted before promotion, ` +
    `${statuses(volumeOutcomes.filter((o) => o.at > promotedAt))} after), limited key ${statuses(limitedOutcomes)}`)
  try {
    // the limited key has spent its burst and is being refused before the master dies
    await eventually(() => accepted(volumeOutcomes).length >= 30 && limitedOutcomes.some((o) => o.status === 429),
      'sends flowing and the limited key refused', 30_000)
    oldMaster = set.master.port
    await set.master.stop('SIGKILL')
    killedAt = Date.now()
    await set.untilMasterIs(set.replica.port, 20_000)
    promotedAt = Date.now()
    acceptedAtPromotion = accepted(volumeOutcomes).length
    await eventually(() => volumeOutcomes.filter((o) => o.status === 202 && o.at > promotedAt).length >= 20 &&
      limitedOutcomes.some((o) => o.at > promotedAt + 1000), 'sends accepted again after the failover', 20_000)
    // run on long enough for a reset bucket to show: a fresh burst would be far above one send a second
    await nothingHappensFor(2000)
  } finally {
    // a failed wait must not leave the senders running
    stop = true
    await Promise.all([...senders, limitedSender])
    report()
  }

  for (const o of [...volumeOutcomes, ...limitedOutcomes]) assert.ok([202, 429, 503].includes(o.status), `a send answered ${o.status}`)

  // GCRA: a full bucket of `perMinute`, then one more every 60/perMinute seconds
  const limitedAccepted = accepted(limitedOutcomes)
  const span = limitedOutcomes.at(-1)!.at - limitedOutcomes[0]!.at
  const allowance = perMinute + Math.floor(span / (60_000 / perMinute)) + 1
  assert.ok(limitedAccepted.length <= allowance,
    `the limited key got ${limitedAccepted.length} 202s in ${span} ms; the bucket allows ${allowance}`)
  assert.ok(limitedAccepted.some((o) => o.at > promotedAt), 'the limited key is served again after the failover')

  const ids = new Set([...accepted(volumeOutcomes), ...limitedAccepted].map((o) => o.id!))
  const domainOf = new Map<string, string>()
  for (const o of accepted(volumeOutcomes)) domainOf.set(o.id!, volume.domain)
  for (const o of limitedAccepted) domainOf.set(o.id!, limited.domain)
  const expected = new Set([...ids].map((id) => `<${id}@${domainOf.get(id)!}>`))
  await eventually(() => {
    const arrived = new Set(sink.messages.map((m) => m.messageId))
    return [...expected].every((id) => arrived.has(id))
  }, `all ${expected.size} accepted messages delivered`, 30_000)
  await nothingHappensFor(1000) // a late duplicate would arrive now
  const counts = new Map<string, number>()
  for (const m of sink.messages) counts.set(m.messageId, (counts.get(m.messageId) ?? 0) + 1)
  const twice = [...counts].filter(([, c]) => c > 1)
  assert.deepEqual(twice, [], 'no message is delivered twice')
  t.diagnostic(`${expected.size} accepted, ${sink.messages.length} delivered, ${counts.size - expected.size} delivered without a 202`)
})
