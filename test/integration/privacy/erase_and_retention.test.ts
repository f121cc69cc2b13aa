import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { request } from 'undici'
import { jetstreamManager } from '@nats-io/jetstream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually } from '../../helpers/waiting.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { putWebhook } from '../../helpers/webhooks.ts'
import { STREAM_WEBHOOK_JOBS, installationSecret, signToken, type TokenClaims } from '../../../protocol/mod.ts'
import { storedEventId, webhookJobsOf } from '../../../stores/webhooks/mod.ts'
import { READ_MODEL_KEYS } from '../../../stores/read_model/message_store_keys.ts'

// One Outbox (gateway, engine, projector) relaying to a sink that refuses `permfail…` addresses with a 550; two
// organisations sending to the same addresses, each with a webhook whose endpoint answers 503, so that every event's
// next attempt waits an hour in OB_WEBHOOK_JOBS.
let sink: SmtpSink
let rx: HttpsReceiver
let ob: TestOutbox
let a: TestOrg
let b: TestOrg
let secret: Buffer

const CAROL = 'carol.doe@dest.example'
const ERIN = 'permfail.erin@dest.example'
const DAVE = 'dave@dest.example'

before(async () => {
  sink = await SmtpSink.start()
  rx = await HttpsReceiver.start(() => ({ status: 503 }))
  ob = await TestOutbox.start({
    env: {
      OB_SMTP_RELAY: sink.url,
      OB_PUBLIC_URL: 'https://mail.example.net',
      OB_WEBHOOK_CA_FILE: testCa().caFile,
      OB_WEBHOOK_ALLOW_PRIVATE: 'true',
      OB_WEBHOOK_RETRY_SCHEDULE: '3600'
    }
  })
  a = await ob.org()
  b = await ob.org()
  secret = await installationSecret(ob.proc.cp.settings, ob.proc.config.secret)
})
after(async () => {
  await ob.close()
  await sink.close()
  await rx.close()
})

async function send (org: TestOrg, to: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await ob.request('POST', '/v1/messages/send', {
    key: org.adminKey,
    body: { from: `app@${org.domain}`, to: [to], subject: 'Hello', html: '<p><a href="https://shop.example.org/x">x</a></p>', ...extra }
  })
  assert.equal(res.status, 202, res.text)
  return res.body.id as string
}

async function settled (org: TestOrg, id: string, status: string): Promise<void> {
  await eventually(async () => {
    const res = await ob.request('GET', `/v1/messages/${id}`, { key: org.adminKey })
    return res.status === 200 && res.body.status === status
  }, `message ${id} ${status}`)
}

function token (k: TokenClaims['k'], org: TestOrg, m: string, r: string, u?: string): string {
  return signToken(secret, { k, o: org.orgId, m, r, ...(u !== undefined ? { u } : {}) })
}

/** Every place (Redis key, or stream and sequence) whose name or bytes contain one of the needles, with its text. */
async function findEverywhere (needles: string[]): Promise<Array<{ where: string, text: string }>> {
  const hits: Array<{ where: string, text: string }> = []
  const look = (where: string, text: string): void => {
    const lower = text.toLowerCase()
    if (needles.some((n) => lower.includes(n))) hits.push({ where, text })
  }
  const redis = ob.proc.redis
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000)
    cursor = next
    for (const key of keys) {
      const type = await redis.type(key)
      let values: string[] = []
      if (type === 'string') values = [await redis.get(key) ?? '']
      else if (type === 'hash') values = Object.entries(await redis.hgetall(key)).flat()
      else if (type === 'list') values = await redis.lrange(key, '0', '-1')
      else if (type === 'set') values = await redis.smembers(key)
      else if (type === 'zset') values = await redis.zrange(key, '0', '-1')
      look(`redis ${key}`, [key, ...values].join('\n'))
    }
  } while (cursor !== '0')
  const jsm = await jetstreamManager(ob.proc.nc)
  // every stream: Outbox's own, the key-value buckets (KV_…) and object stores (OBJ_…)
  for await (const si of jsm.streams.list()) {
    const { first_seq: first, last_seq: last } = si.state
    for (let seq = first; seq <= last && last > 0; seq++) {
      const m = await jsm.streams.getMessage(si.config.name, { seq })
      if (m === null) continue
      look(`${si.config.name} #${seq} ${m.subject}`, `${m.subject}\n${Buffer.from(m.data).toString('latin1')}`)
    }
  }
  return hits
}

/** The jobs waiting in OB_WEBHOOK_JOBS, each as its organisation and the id of the event it is owed for. */
async function waitingJobs (): Promise<Array<{ org: string, event: string }>> {
  const jsm = await jetstreamManager(ob.proc.nc)
  const { first_seq: first, last_seq: last } = (await jsm.streams.info(STREAM_WEBHOOK_JOBS)).state
  const jobs: Array<{ org: string, event: string }> = []
  for (let seq = first; seq <= last && last > 0; seq++) {
    const m = await jsm.streams.getMessage(STREAM_WEBHOOK_JOBS, { seq })
    if (m !== null) for (const j of webhookJobsOf(m.json())) jobs.push({ org: j.org_id, event: storedEventId(j) })
  }
  return jobs
}

/** The ids of the events the receiver was sent on `path`. */
function eventsSentTo (path: string): string[] {
  return [...new Set(rx.requests.filter((q) => q.path === path).map((q) => (JSON.parse(q.rawBody.toString()) as { id: string }).id))]
}

/** The suppression bucket's key of an address: a plain SHA-256 of it (its first 40 hex digits). */
const plainKey = (address: string): string => createHash('sha256').update(address).digest('hex').slice(0, 40)

/** Whether a place belongs to the organisation: its id, or one of its message ids, is in the name or bytes. */
function ofOrg (hit: { where: string, text: string }, org: TestOrg, messageIds: string[]): boolean {
  return [org.orgId, ...messageIds].some((s) => hit.where.includes(s) || hit.text.includes(s))
}

test('an erase removes the address from every store of the organisation, and only of that organisation', async () => {
  const hookEvents = ['delivered', 'bounced', 'opened', 'clicked', 'unsubscribed']
  await putWebhook(ob, a, { url: rx.url('/a'), events: hookEvents })
  await putWebhook(ob, b, { url: rx.url('/b'), events: hookEvents })
  // A suppresses Carol by hand and lifts it again: two audit entries naming her
  const added = await ob.request('POST', '/v1/suppressions', { key: a.adminKey, body: { email: CAROL } })
  assert.equal(added.status, 201, added.text)
  assert.equal((await ob.request('DELETE', `/v1/suppressions/${encodeURIComponent(CAROL)}`, { key: a.adminKey })).status, 204)
  // then Dave, both ways, after them: a read from then on must find Dave's entries below Carol's rewritten ones
  const lifted = await ob.request('GET', '/v1/audit-log?action=suppression.removed', { key: a.adminKey })
  const afterCarol = new Date(Date.parse(lifted.body.data[0].at) + 1).toISOString()
  await eventually(() => Date.now() > Date.parse(afterCarol), 'the clock passed Carol\'s entries')
  assert.equal((await ob.request('POST', '/v1/suppressions', { key: a.adminKey, body: { email: DAVE } })).status, 201)
  assert.equal((await ob.request('DELETE', `/v1/suppressions/${DAVE}`, { key: a.adminKey })).status, 204)
  const toCarol = await send(a, 'Carol Doe <Carol.Doe@dest.example>')
  const toErin = await send(a, ERIN)
  const bToCarol = await send(b, CAROL)
  await settled(a, toCarol, 'delivered')
  await settled(a, toErin, 'bounced')
  await settled(b, bToCarol, 'delivered')
  // B suppresses Carol by hand: its entry (under the same plain key) and its audit entry stay
  assert.equal((await ob.request('POST', '/v1/suppressions', { key: b.adminKey, body: { email: CAROL } })).status, 201)
  // an open, a click and a one-click unsubscribe by Carol (which suppresses her address in A's list)
  const hop = async (path: string, method: 'GET' | 'POST' = 'GET'): Promise<number> => {
    const res = await request(ob.baseUrl + path, {
      method,
      headers: { 'user-agent': 'TestMail/1.0', 'content-type': 'application/x-www-form-urlencoded' },
      ...(method === 'POST' ? { body: 'List-Unsubscribe=One-Click' } : {})
    })
    await res.body.dump()
    return res.statusCode
  }
  assert.equal(await hop(`/t/o/${token('o', a, toCarol, CAROL)}`), 200)
  assert.equal(await hop(`/t/c/${token('c', a, toCarol, CAROL, 'https://shop.example.org/x')}`), 302)
  assert.equal(await hop(`/t/u/${token('u', a, toCarol, CAROL)}`, 'POST'), 200)
  await eventually(async () => {
    const res = await ob.request('GET', `/v1/events?message_id=${toCarol}&limit=100`, { key: a.adminKey })
    const types = new Set(res.body.data.map((e: any) => e.type))
    return types.has('opened') && types.has('clicked') && types.has('unsubscribed')
  }, 'tracking events in the read model')
  assert.equal(ob.proc.cp.isSuppressed(a.orgId, CAROL), true)
  assert.equal(ob.proc.cp.isSuppressed(a.orgId, ERIN), true)
  await eventually(async () => (await ob.request('GET', `/v1/messages/${toCarol}/content`, { key: a.adminKey })).status === 200,
    'content recorded')
  // every event was attempted once and its next attempt waits: A's five (four of Carol, Erin's bounce), B's delivery
  await eventually(async () => {
    const sent = [...eventsSentTo('/a'), ...eventsSentTo('/b')]
    const waiting = new Set((await waitingJobs()).map((j) => j.event))
    return eventsSentTo('/a').length === 5 && eventsSentTo('/b').length === 1 && sent.every((e) => waiting.has(e))
  }, 'the webhook retries wait in OB_WEBHOOK_JOBS')
  const aEvents = eventsSentTo('/a')
  const bEvents = eventsSentTo('/b')

  const erased = await ob.request('POST', '/v1/privacy/erase', { key: a.adminKey, body: { email: 'CAROL.doe@dest.example' } })
  assert.equal(erased.status, 200, erased.text)
  const r = erased.body
  assert.match(r.id, /^era_/)
  assert.ok(Number.isFinite(Date.parse(r.erased_at)))
  assert.match(r.address_hash, /^erased:[0-9a-f]{64}$/)
  assert.equal(r.removed.messages, 1)
  assert.equal(r.removed.message_content, 1)
  assert.equal(r.removed.suppressions, 1)
  assert.equal(r.removed.suppression_markers, 1)
  assert.equal(r.removed.audit_entries, 2) // suppression.added, suppression.removed
  assert.equal(r.removed.webhook_jobs, 4)
  assert.equal(r.removed.recipient_entries, 1)
  assert.equal(r.removed.delivery_states, 1)
  assert.ok(r.removed.stored_events >= 4, JSON.stringify(r)) // delivered, opened, clicked, unsubscribed
  assert.ok(r.removed.events >= 4, JSON.stringify(r))
  assert.equal(r.kept_suppressed, false)

  const kept = await ob.request('POST', '/v1/privacy/erase', { key: a.adminKey, body: { email: ERIN, keep_suppressed: true } })
  assert.equal(kept.status, 200, kept.text)
  assert.equal(kept.body.kept_suppressed, true)
  assert.equal(kept.body.removed.suppressions, 1)
  assert.equal(kept.body.removed.suppression_markers, 1)
  assert.equal(kept.body.removed.webhook_jobs, 1)

  // nothing of A names either address or holds its plain key, anywhere; B's message to Carol is all there
  const hits = await findEverywhere([CAROL, ERIN, plainKey(CAROL), plainKey(ERIN)])
  const ofA = hits.filter((h) => ofOrg(h, a, [toCarol, toErin]))
  assert.deepEqual(ofA.map((h) => h.where), [], 'organisation A keeps nothing naming the addresses')
  // nor an index entry of the erased messages: every index, by tag, status or stream, dropped them
  const left = (await findEverywhere([toCarol, toErin])).filter((h) => h.where.startsWith('redis '))
  assert.deepEqual(left.map((h) => h.where), [], 'no Redis key holds an erased message\'s id')
  const ofB = (prefix: string): boolean => hits.some((h) => ofOrg(h, b, [bToCarol]) && h.where.startsWith(prefix))
  assert.ok(ofB('redis '), 'B\'s read model still names Carol')
  assert.ok(ofB('OB_EVENTS '), 'B\'s events still name Carol')
  assert.ok(ofB('OB_AUDIT '), 'B\'s audit entry still names Carol')
  assert.ok(ofB('KV_'), 'B\'s suppression entry is still under Carol\'s key')
  assert.ok(ob.proc.cp.isSuppressed(b.orgId, CAROL))
  // no attempt waits for an event of A's any more (their jobs name the events by id); B's waits
  const jobs = await waitingJobs()
  assert.deepEqual(jobs.filter((j) => aEvents.includes(j.event)), [], 'A\'s webhook jobs of the erased events are gone')
  assert.ok(jobs.some((j) => j.org === b.orgId && j.event === bEvents[0]), 'B\'s webhook job waits')
  assert.equal((await ob.request('GET', `/v1/messages/${bToCarol}`, { key: b.adminKey })).status, 200)
  assert.equal((await ob.request('GET', `/v1/messages/${toCarol}`, { key: a.adminKey })).status, 404)

  // the audit entry names the keyed hash, never the address
  const audit = await ob.request('GET', '/v1/audit-log?action=privacy.erased', { key: a.adminKey })
  assert.equal(audit.status, 200, audit.text)
  assert.deepEqual(audit.body.data.map((e: any) => e.target).sort(), [r.address_hash, kept.body.address_hash].sort())
  // and the suppression entries made before the erase name it too now, marked rewritten, with their own id and time
  const before = await ob.request('GET', `/v1/audit-log?target=${r.address_hash}`, { key: a.adminKey })
  const rewritten = before.body.data.filter((e: any) => e.action !== 'privacy.erased')
  assert.deepEqual(rewritten.map((e: any) => e.action).sort(), ['suppression.added', 'suppression.removed'])
  assert.ok(rewritten.every((e: any) => e.rewritten_at === r.erased_at && e.at < r.erased_at), JSON.stringify(rewritten))
  const recent = await ob.request('GET', `/v1/audit-log?since=${encodeURIComponent(afterCarol)}`, { key: a.adminKey })
  assert.equal(recent.status, 200, recent.text)
  assert.deepEqual(recent.body.data.map((e: any) => e.action).sort(),
    ['privacy.erased', 'privacy.erased', 'suppression.added', 'suppression.removed'], JSON.stringify(recent.body.data))

  // an address whose suppression was lifted before: no entry, but the marker under its plain key goes
  const daveErased = await ob.request('POST', '/v1/privacy/erase', { key: a.adminKey, body: { email: DAVE } })
  assert.equal(daveErased.status, 200, daveErased.text)
  assert.equal(daveErased.body.removed.suppressions, 0)
  assert.equal(daveErased.body.removed.suppression_markers, 1)
  assert.equal(daveErased.body.removed.audit_entries, 2)
  assert.deepEqual((await findEverywhere([DAVE, plainKey(DAVE)])).filter((h) => ofOrg(h, a, [])).map((h) => h.where), [])

  // Erin stays refused, through the hash; Carol (erased without keep_suppressed) may be sent to again
  const refused = await ob.request('POST', '/v1/messages/send', {
    key: a.adminKey, body: { from: `app@${a.domain}`, to: ['Permfail.Erin@dest.example'], subject: 'again', text: 'x' }
  })
  assert.equal(refused.status, 422, refused.text)
  assert.equal(refused.body.error.code, 'recipient_suppressed')
  assert.equal(ob.proc.cp.isSuppressed(b.orgId, ERIN), false, 'another organisation\'s list is untouched')
  const list = await ob.request('GET', '/v1/suppressions', { key: a.adminKey })
  assert.deepEqual(list.body.data.map((s: any) => s.email), [kept.body.address_hash])
  await send(a, CAROL)
})

test('an erase waits for mail still to be sent to the address: 409 naming it, nothing erased; after a cancel it goes', async () => {
  const later = new Date(Date.now() + 3_600_000).toISOString()
  const scheduled = await send(a, 'frank@dest.example', { scheduled_at: later })
  const refused = await ob.request('POST', '/v1/privacy/erase', { key: a.adminKey, body: { email: 'Frank@dest.example' } })
  assert.equal(refused.status, 409, refused.text)
  assert.equal(refused.body.error.code, 'conflict')
  assert.deepEqual(refused.body.error.details.message_ids, [scheduled])
  assert.equal((await ob.request('GET', `/v1/messages/${scheduled}`, { key: a.adminKey })).status, 200, 'nothing erased')
  assert.equal((await ob.request('POST', `/v1/messages/${scheduled}/cancel`, { key: a.adminKey })).status, 200)
  const erased = await ob.request('POST', '/v1/privacy/erase', { key: a.adminKey, body: { email: 'frank@dest.example' } })
  assert.equal(erased.status, 200, erased.text)
  assert.equal(erased.body.removed.messages, 1)
  assert.equal((await ob.request('GET', `/v1/messages/${scheduled}`, { key: a.adminKey })).status, 404)
})

test('retention: the organisation reads and sets it within the installation\'s maximum; ' +
  'records are written with its expiry', async () => {
  const org = await ob.org()
  const read = await ob.request('GET', '/v1/retention', { key: org.adminKey })
  assert.equal(read.status, 200, read.text)
  assert.deepEqual(read.body, {
    messages_days: 30, events_days: 30, content_days: 30, maximum: { messages_days: 30, events_days: 30, content_days: 30 }
  })
  const over = await ob.request('PATCH', '/v1/retention', { key: org.adminKey, body: { messages_days: 31 } })
  assert.equal(over.status, 400)
  assert.equal(over.body.error.code, 'validation_error')
  const set = await ob.request('PATCH', '/v1/retention', { key: org.adminKey, body: { messages_days: 2, events_days: 1 } })
  assert.equal(set.status, 200, set.text)
  assert.equal(set.body.messages_days, 2)
  assert.equal(set.body.events_days, 1)
  assert.equal(set.body.content_days, 30)

  await eventually(() => ob.proc.cp.readModelRetention(org.orgId).eventsMs === 86_400_000, 'the setting reached the mirror')
  const id = await send(org, 'ret@dest.example')
  await settled(org, id, 'delivered')
  const redis = ob.proc.redis
  const day = 86_400_000
  const msgTtl = await redis.pttl(READ_MODEL_KEYS.message(org.orgId, id))
  assert.ok(msgTtl > day && msgTtl <= 2 * day, `message record expires after 2 days (${msgTtl} ms)`)
  const events = await redis.zrange(READ_MODEL_KEYS.messageEvents(org.orgId, id), '0', '-1')
  assert.ok(events.length > 0)
  const evTtl = await redis.pttl(READ_MODEL_KEYS.event(org.orgId, events[0]!))
  assert.ok(evTtl > 0 && evTtl <= day, `event expires after 1 day (${evTtl} ms)`)

  // content: 0 days shows none, whatever the installation records
  const body = { content_days: 0, messages_days: null }
  const none = await ob.request('PATCH', '/v1/retention', { key: org.adminKey, body })
  assert.equal(none.body.content_days, 0)
  assert.equal(none.body.messages_days, 30)
  const content = await ob.request('GET', `/v1/messages/${id}/content`, { key: org.adminKey })
  assert.equal(content.status, 404)
})
