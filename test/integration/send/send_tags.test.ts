import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * Tags given at send travel with the message: on its record, in every event's `data.tags` (webhooks and
 * GET /v1/events), and `?tag=` on messages, events and stats keeps only that tag's items of the caller's
 * organisation.
 */
let sink: SmtpSink
let rx: HttpsReceiver
let ob: TestOutbox
let org: TestOrg
let other: TestOrg
let key: string
let otherKey: string

before(async () => {
  sink = await SmtpSink.start({ keepRaw: false })
  rx = await HttpsReceiver.start()
  ob = await TestOutbox.start({ env: { OB_SMTP_RELAY: sink.url, OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true' } })
  org = await ob.org()
  other = await ob.org()
  key = await ob.key(org, ['send', 'read'])
  otherKey = await ob.key(other, ['send', 'read'])
})
after(async () => { await ob.close(); await rx.close(); await sink.close() })

const mail = (o: TestOrg, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({
    from: `App <hello@${o.domain}>`, to: 'user@example.net', subject: 'Hello', text: 'Hi', track_opens: false, track_clicks: false, ...extra
  })

async function send (k: string, body: Record<string, unknown>): Promise<string> {
  const r = await ob.request('POST', '/v1/messages/send', { key: k, body })
  assert.equal(r.status, 202, r.text)
  return r.body.id as string
}

type Envelope = { id: string, type: string, data: { message_id: string, tags?: string[] } }

test('tags from a send and a batch reach the delivered webhook, the record, and the tag filters of one organisation only', async () => {
  const wh = await ob.request('POST', '/v1/webhooks', { key: org.adminKey, body: { url: rx.url('/tags'), events: ['delivered'] } })
  assert.equal(wh.status, 201, wh.text)
  const tagged = await send(key, mail(org, { tags: ['welcome', 'onboarding', 'welcome'] }))
  const batch = await ob.request('POST', '/v1/messages/batch', { key, body: { messages: [mail(org, { tags: ['batch-a'] }), mail(org)] } })
  assert.equal(batch.status, 202, batch.text)
  const [batchTagged, untagged] = (batch.body.data as Array<{ id: string }>).map((d) => d.id)
  const othersTagged = await send(otherKey, mail(other, { tags: ['welcome'] }))

  const hook = (id: string): Envelope | undefined => rx.on('/tags').map((r) => JSON.parse(r.rawBody.toString('utf8')) as Envelope)
    .find((e) => e.data.message_id === id)
  await eventually(() => [tagged, batchTagged!, untagged!].every((id) => hook(id) !== undefined), 'the delivered webhooks')
  assert.deepEqual(hook(tagged)!.data.tags, ['welcome', 'onboarding'], 'each tag once, in the order given')
  assert.deepEqual(hook(batchTagged!)!.data.tags, ['batch-a'])
  assert.equal(hook(untagged!)!.data.tags, undefined, 'an untagged message\'s events have no tags field')

  const record = await ob.request('GET', `/v1/messages/${tagged}`, { key })
  assert.equal(record.status, 200)
  assert.deepEqual(record.body.tags, ['welcome', 'onboarding'])
  assert.deepEqual(record.body.events.find((e: Envelope) => e.type === 'delivered').data.tags, ['welcome', 'onboarding'])

  const ids = (r: { body: { data: Array<{ id: string }> } }): string[] => r.body.data.map((m) => m.id)
  await eventually(async () => ids(await ob.request('GET', '/v1/events?tag=welcome', { key })).length === 1,
    'the tagged event in the read model')
  const events = await ob.request('GET', '/v1/events?tag=welcome', { key })
  assert.deepEqual(events.body.data.map((e: Envelope) => [e.type, e.data.message_id, e.data.tags]),
    [['delivered', tagged, ['welcome', 'onboarding']]])
  assert.deepEqual(ids(await ob.request('GET', '/v1/events?tag=batch-a&type=delivered', { key })).length, 1)
  assert.deepEqual(ids(await ob.request('GET', '/v1/events?tag=batch-a&type=bounced', { key })), [])

  assert.deepEqual(ids(await ob.request('GET', '/v1/messages?tag=welcome', { key })), [tagged])
  assert.deepEqual(ids(await ob.request('GET', '/v1/messages?tag=onboarding&status=delivered', { key })), [tagged])
  assert.deepEqual(ids(await ob.request('GET', '/v1/messages?tag=batch-a', { key })), [batchTagged])
  assert.deepEqual(ids(await ob.request('GET', '/v1/messages?tag=welcome&to=user@example.net', { key })), [tagged])
  assert.deepEqual(ids(await ob.request('GET', '/v1/messages?tag=nothing', { key })), [])
  // The other organisation sees its own message under the same tag, never this one.
  await eventually(async () => ids(await ob.request('GET', '/v1/events?tag=welcome', { key: otherKey })).length === 1,
    'the other organisation\'s event')
  assert.deepEqual(ids(await ob.request('GET', '/v1/messages?tag=welcome', { key: otherKey })), [othersTagged])

  const stats = await ob.request('GET', '/v1/stats?tag=welcome', { key })
  assert.equal(stats.status, 200, stats.text)
  assert.equal(stats.body.counts.sent, 1)
  assert.equal(stats.body.counts.delivered, 1)
  const all = await ob.request('GET', '/v1/stats', { key })
  assert.equal(all.body.counts.sent, 3)
  const none = await ob.request('GET', '/v1/stats?tag=nothing', { key })
  assert.equal(none.body.counts.sent, 0)
})

test('a tag filter keeps live and sandbox traffic apart and combines with environment, status and to', async () => {
  const sandboxKey = await ob.key(org, ['send', 'read'], 'test')
  const live = await send(key, mail(org, { to: 'ann@live.example', tags: ['split'] }))
  const sandbox = await send(sandboxKey, mail(org, { to: 'ann@sandbox.example', tags: ['split', 'other'] }))
  const ids = (r: { body: { data: Array<{ id: string }> } }): string[] => r.body.data.map((m) => m.id)
  const get = async (path: string): Promise<string[]> => {
    const r = await ob.request('GET', path, { key })
    assert.equal(r.status, 200, `${path} → ${r.text}`)
    return ids(r)
  }
  const delivered = async (id: string, env: string): Promise<boolean> =>
    (await get(`/v1/messages?environment=${env}&tag=split&status=delivered`)).includes(id)
  await eventually(async () => await delivered(live, 'live') && await delivered(sandbox, 'test'), 'both messages delivered')

  assert.deepEqual(await get('/v1/messages?tag=split'), [live], 'the live view never shows sandbox traffic')
  assert.deepEqual(await get('/v1/messages?tag=split&environment=live'), [live])
  assert.deepEqual(await get('/v1/messages?tag=split&environment=test'), [sandbox])
  assert.deepEqual(await get('/v1/messages?tag=other'), [])
  assert.deepEqual(await get('/v1/messages?tag=split&environment=test&status=delivered&to=ann@'), [sandbox])
  assert.deepEqual(await get('/v1/messages?tag=split&environment=test&status=bounced'), [])
  assert.deepEqual(await get('/v1/messages?tag=other&environment=test&to=ann@live'), [])
  assert.deepEqual(await get('/v1/messages?tag=split&to=ann@'), [live])
  assert.deepEqual(await get('/v1/messages?tag=split&to=ann@sandbox'), [])

  const about = async (path: string): Promise<string[]> => {
    const r = await ob.request('GET', path, { key })
    assert.equal(r.status, 200, `${path} → ${r.text}`)
    return [...new Set((r.body.data as Envelope[]).map((e) => e.data.message_id))]
  }
  await eventually(async () => (await about('/v1/events?tag=split&environment=test&type=delivered')).length === 1,
    'the sandbox delivered event')
  assert.deepEqual(await about('/v1/events?tag=split'), [live])
  assert.deepEqual(await about('/v1/events?tag=split&environment=test'), [sandbox])
  assert.deepEqual(await about('/v1/events?tag=other'), [])

  const liveStats = await ob.request('GET', '/v1/stats?tag=split', { key })
  assert.equal(liveStats.body.counts.sent, 1)
  const testStats = await ob.request('GET', '/v1/stats?tag=split&environment=test', { key })
  assert.equal(testStats.body.counts.sent, 1)
  assert.equal(testStats.body.counts.delivered, 1)
  assert.equal((await ob.request('GET', '/v1/stats?tag=other', { key })).body.counts.sent, 0)
})

async function expect400 (path: string, body: unknown, field: RegExp): Promise<void> {
  const r = await ob.request(body === undefined ? 'GET' : 'POST', path, { key, ...(body === undefined ? {} : { body }) })
  assert.equal(r.status, 400, `${path} ${JSON.stringify(body)} → ${r.status} ${r.text}`)
  assert.equal(r.body.error.code, 'validation_error')
  const fields: string[] = r.body.error.errors.map((e: { field: string }) => e.field)
  assert.ok(fields.some((f) => field.test(f)), `expected ${String(field)} in ${JSON.stringify(r.body.error.errors)}`)
}

test('tags that are not at most 10 strings of [A-Za-z0-9_-]{1,64} are 400 validation_error naming the tag', async () => {
  for (const tags of [['has space'], [''], ['x'.repeat(65)], ['ok', 'é'], Array.from({ length: 11 }, (_, i) => `t${i}`), 'welcome', [5]]) {
    await expect400('/v1/messages/send', mail(org, { tags }), /^tags/)
    await expect400('/v1/messages/batch', { messages: [mail(org), mail(org, { tags })] }, /^messages\[1\]\.tags|^messages\.1\.tags/)
  }
  const fine = await ob.request('POST', '/v1/messages/send', {
    key, body: mail(org, { tags: Array.from({ length: 10 }, (_, i) => `A_${i}-${'z'.repeat(58)}`) })
  })
  assert.equal(fine.status, 202, fine.text)
  for (const path of ['/v1/messages', '/v1/events', '/v1/stats']) {
    for (const bad of ['has%20space', '', 'x'.repeat(65), '%C3%A9', 'a%0D%0Ab']) await expect400(`${path}?tag=${bad}`, undefined, /^tag$/)
  }
})
