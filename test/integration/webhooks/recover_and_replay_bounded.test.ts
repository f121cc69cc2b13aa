import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Redis } from 'ioredis'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { eventually } from '../../helpers/waiting.ts'
import { putWebhook } from '../../helpers/webhooks.ts'
import { eventRecord, newId, type EventType } from '../../../protocol/mod.ts'
import { READ_MODEL_KEYS } from '../../../stores/read_model/message_store_keys.ts'

/**
 * What one tenant's request makes the gateway read is bounded by the request, not by the tenant's history or by
 * the installation: a recover over many events reads and queues them in bounded batches (counted on the Redis
 * commands it sends, seen through MONITOR), and replaying an event id reads only the caller's organisation and the
 * event's owner key, which names no organisation: an unknown id (404) and another organisation's event (403) cost the
 * same two reads however many organisations there are.
 */
let ob: TestOutbox
let rx: HttpsReceiver
let org: TestOrg
let key: string
before(async () => {
  rx = await HttpsReceiver.start()
  rx.script = () => ({ status: 200 })
  ob = await TestOutbox.start({ env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true' } })
  org = await ob.org()
  key = await ob.key(org, ['manage', 'read'])
})
after(async () => { await ob.close(); await rx.close() })

/** The Redis commands (name and arguments) sent while `during` runs, as MONITOR shows them. */
async function commandsDuring (during: () => Promise<void>): Promise<string[][]> {
  const client = new Redis(ob.redisServer.url)
  const monitor = await client.monitor()
  const seen: string[][] = []
  monitor.on('monitor', (_time: string, args: string[]) => { seen.push(args) })
  await new Promise((resolve) => setTimeout(resolve, 100))
  await during()
  // An ECHO through the monitored server marks the end of what `during` sent.
  const marker = `end-${newId('evt')}`
  await ob.proc.redis.echo(marker)
  await eventually(() => seen.some((c) => c.includes(marker)), 'the marker command at the monitor', undefined, 20)
  monitor.disconnect()
  client.disconnect()
  return seen
}

test('a recover of 1300 events reads and queues them in batches: each once, no Redis call carrying more than 1000 of them', async () => {
  const store = ob.proc.gateway!.deps.messages
  const t0 = Date.now() - 3600_000
  const types: EventType[] = ['delivered', 'bounced']
  const n = 1300
  // Three events per millisecond across both types, so ties fall across the pages the indexes are read in.
  const records = Array.from({ length: n }, (_v, i) => eventRecord(newId('evt'), types[i % 2]!, org.orgId,
    { message_id: newId('msg'), to: `r${i}@remote.test` } as never, undefined, new Date(t0 + Math.floor(i / 3)).toISOString()))
  for (let i = 0; i < n; i += 100) await Promise.all(records.slice(i, i + 100).map(async (e) => await store.applyEvent(e)))
  // Neither before `since` nor of a type the webhook does not subscribe to.
  await store.applyEvent(eventRecord(newId('evt'), 'delivered', org.orgId, { message_id: newId('msg'), to: 'old@remote.test' } as never,
    undefined, new Date(t0 - 60_000).toISOString()))
  await store.applyEvent(eventRecord(newId('evt'), 'opened', org.orgId, { message_id: newId('msg'), to: 'o@remote.test' } as never,
    undefined, new Date(t0 + 10).toISOString()))
  const wh = await putWebhook(ob, org, { url: rx.url('/recover'), events: ['delivered', 'bounced'] })
  await ob.proc.cp.webhooks.modify(`${org.orgId}.${wh.id}`, (cur) => ({ ...cur, created_at: new Date(t0 - 3600_000).toISOString() }))

  let answer: { status: number, body: any } | undefined
  let retried = false
  const commands = await commandsDuring(async () => {
    // A 503 (JetStream or Redis slow on a loaded machine) is retried as a client would: what was queued is not
    // queued again.
    for (let attempt = 0; attempt < 5; attempt++) {
      answer = await ob.request('POST', `/v1/webhooks/${wh.id}/recover`, { key, body: { since: new Date(t0 - 1000).toISOString() } })
      if (answer.status !== 503) break
      retried = true
    }
  })
  assert.equal(answer!.status, 202, JSON.stringify(answer!.body))
  if (!retried) assert.equal(answer!.body.events, n, 'every seeded event once, none before since, none unsubscribed')
  else {
    // Part was queued by the attempt that failed: the webhook's receipts show every seeded event, each once.
    await rx.waitFor(n, { path: '/recover', timeoutMs: 180_000 })
    const got = rx.on('/recover').map((r) => JSON.parse(r.rawBody.toString('utf8')).id as string)
    assert.deepEqual([...new Set(got)].sort(), records.map((e) => e.id).sort())
  }

  const indexReads = commands.filter((c) => c[0]?.toLowerCase() === 'zrangebyscore' && c[1]?.includes(':evs:t:'))
  assert.ok(indexReads.length > 0)
  for (const c of indexReads) {
    const limit = c.findIndex((a) => a.toLowerCase() === 'limit')
    assert.ok(limit > 0, `the index is read a page at a time: ${c.slice(0, 6).join(' ')}`)
    assert.ok(Number(c[limit + 2]) <= 1000, `a page of ${c[limit + 2]}`)
  }
  const widest = Math.max(...commands.map((c) => c.length))
  assert.ok(widest <= 1000, `the widest Redis command of the recover has ${widest} arguments`)

  // Claims are per event id, and only the seeded events qualify: `events: n` is each of them queued once.
  const again = await ob.request('POST', `/v1/webhooks/${wh.id}/recover`, { key, body: { since: new Date(t0 - 1000).toISOString() } })
  assert.equal(again.body.events, 0, 'a second recover within the hour queues none again')
  await rx.waitFor(1, { path: '/recover' })
})

test('replaying an event id reads only the caller\'s organisation and the event\'s owner, ' +
  'however many organisations there are', async () => {
  const others: TestOrg[] = []
  for (let i = 0; i < 20; i++) others.push(await ob.org())
  const wh = await putWebhook(ob, org, { url: rx.url('/replay'), events: ['delivered'] })
  const theirs = eventRecord(newId('evt'), 'delivered', others[7]!.orgId, { message_id: newId('msg'), to: 't@remote.test' } as never)
  await ob.proc.gateway!.deps.messages.applyEvent(theirs)
  // The owner key is kept exactly as long as the event it names.
  const [eventTtl, ownerTtl] = await Promise.all([ob.proc.redis.pttl(READ_MODEL_KEYS.event(theirs.org_id, theirs.id)),
    ob.proc.redis.pttl(READ_MODEL_KEYS.eventOwner(theirs.id))])
  assert.ok(eventTtl > 0 && Math.abs(eventTtl - ownerTtl) < 1000, `event ${eventTtl} ms, owner ${ownerTtl} ms`)

  /** Replays `eventId` and checks the answer and that one event key (the caller's) and one owner key were read. */
  async function replayReads (eventId: string, status: number, code: string): Promise<void> {
    let answer: { status: number, body: any } | undefined
    const commands = await commandsDuring(async () => {
      answer = await ob.request('POST', `/v1/webhooks/${wh.id}/replay`, { key, body: { event_id: eventId } })
    })
    assert.equal(answer!.status, status)
    assert.equal(answer!.body.error.code, code)
    const args = commands.flatMap((c) => c.slice(1))
    const eventReads = args.filter((a) => a.includes(':ev:evt_'))
    assert.equal(eventReads.length, 1, `event keys read: ${eventReads.join(', ')}`)
    assert.ok(eventReads[0]!.startsWith(`ob:{${org.orgId}}:`))
    const ownerReads = args.filter((a) => a.includes(':evorg:'))
    assert.deepEqual(ownerReads, [READ_MODEL_KEYS.eventOwner(eventId)], 'one owner key, which names no organisation')
  }
  await replayReads(newId('evt'), 404, 'not_found')
  await replayReads(theirs.id, 403, 'forbidden')
})
