import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { MessageStore } from '../../../stores/read_model/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { queue, event } from './fixtures.ts'

let ob: TestOutbox
let org: TestOrg
let key: string
const HOUR = 3600_000
// A fixed past hour so buckets are predictable: 2 days ago at hh:00.
const hour0 = Math.floor((Date.now() - 48 * HOUR) / HOUR) * HOUR

before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  key = await ob.key(org, ['read'])
  const store = new MessageStore(ob.proc.redis)
  const at = (h: number, min: number) => new Date(hour0 + h * HOUR + min * 60_000)
  const a = await queue(ob, org, { created_at: at(0, 5).toISOString() })
  const b = await queue(ob, org, { created_at: at(0, 10).toISOString() })
  const c = await queue(ob, org, { created_at: at(25, 0).toISOString() })
  await store.applyEvent(event(org, a.id, 'delivered', at(0, 6)))
  await store.applyEvent(event(org, a.id, 'opened', at(1, 0)))
  await store.applyEvent(event(org, a.id, 'clicked', at(1, 1)))
  await store.applyEvent(event(org, b.id, 'deferred', at(0, 11)))
  await store.applyEvent(event(org, b.id, 'bounced', at(2, 0)))
  await store.applyEvent(event(org, c.id, 'delivered', at(25, 1)))
  await store.applyEvent(event(org, c.id, 'complained', at(25, 30)))
  await store.applyEvent(event(org, c.id, 'unsubscribed', at(25, 31)))
  // Another organisation's activity never shows.
  const other = await ob.org()
  const d = await queue(ob, other, { created_at: at(0, 5).toISOString() })
  await store.applyEvent(event(other, d.id, 'delivered', at(0, 6)))
})
after(async () => { await ob.close() })

const iso = (ms: number): string => new Date(ms).toISOString()

test('counts per event type and sent over a range', async () => {
  const r = await ob.request('GET', `/v1/stats?from=${iso(hour0)}&to=${iso(hour0 + 48 * HOUR)}`, { key })
  assert.equal(r.status, 200)
  assert.deepEqual(r.body, {
    from: iso(hour0),
    to: iso(hour0 + 48 * HOUR),
    counts: { sent: 3, delivered: 2, bounced: 1, deferred: 1, opened: 1, clicked: 1, unsubscribed: 1, complained: 1 }
  })
})

test('the range selects whole hours; to is exclusive', async () => {
  const firstHour = await ob.request('GET', `/v1/stats?from=${iso(hour0 + 30 * 60_000)}&to=${iso(hour0 + HOUR)}`, { key })
  assert.deepEqual(firstHour.body.counts,
    { sent: 2, delivered: 1, bounced: 0, deferred: 1, opened: 0, clicked: 0, unsubscribed: 0, complained: 0 })
})

test('interval=day adds a series per UTC day that sums to the counts', async () => {
  const r = await ob.request('GET', `/v1/stats?from=${iso(hour0)}&to=${iso(hour0 + 30 * HOUR)}&interval=day`, { key })
  assert.equal(r.status, 200)
  assert.equal(r.body.interval, 'day')
  assert.ok(r.body.series.length >= 2)
  const sum: Record<string, number> = {}
  for (const s of r.body.series) {
    assert.match(s.start, /T00:00:00\.000Z$/)
    for (const [k, v] of Object.entries(s.counts)) sum[k] = (sum[k] ?? 0) + (v as number)
  }
  assert.deepEqual(sum, r.body.counts)
  const hourly = await ob.request('GET', `/v1/stats?from=${iso(hour0)}&to=${iso(hour0 + 3 * HOUR)}&interval=hour`, { key })
  assert.deepEqual(hourly.body.series.map((s: { counts: { opened: number } }) => s.counts.opened), [0, 1, 0])
})

test('default range is the last 7 days', async () => {
  const r = await ob.request('GET', '/v1/stats', { key })
  assert.equal(r.status, 200)
  assert.equal(Date.parse(r.body.to) - Date.parse(r.body.from), 7 * 24 * HOUR)
  assert.equal(r.body.counts.sent, 3)
})

test('bad ranges are 400 validation_error', async () => {
  const now = Date.now()
  for (const q of [`from=${iso(now)}&to=${iso(now - HOUR)}`, `from=${iso(now - 91 * 24 * HOUR)}&to=${iso(now)}`, 'from=2024-02-30']) {
    const r = await ob.request('GET', `/v1/stats?${q}`, { key })
    assert.equal(r.status, 400, q)
    assert.equal(r.body.error.code, 'validation_error')
    assert.equal(r.body.error.field, 'from')
  }
  const ok = await ob.request('GET', `/v1/stats?from=${iso(now - 90 * 24 * HOUR)}&to=${iso(now)}`, { key })
  assert.equal(ok.status, 200, '90 days is allowed')
})

test('a scheduled message counts as sent once, in the hour it is taken up to be sent, and a canceled one never', async () => {
  const store = new MessageStore(ob.proc.redis)
  const day = Math.floor((Date.now() - 10 * 24 * HOUR) / HOUR) * HOUR // a range of its own, away from the messages above
  const range = `from=${iso(day)}&to=${iso(day + 6 * HOUR)}&interval=hour`
  const sentPerHour = async (filter = ''): Promise<number[]> => {
    const r = await ob.request('GET', `/v1/stats?${range}${filter}`, { key })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.body.counts.sent, (r.body.series as Array<{ counts: { sent: number } }>).reduce((a, s) => a + s.counts.sent, 0))
    return (r.body.series as Array<{ counts: { sent: number } }>).map((s) => s.counts.sent)
  }
  const later = new Date(day + 3 * HOUR).toISOString()
  const now = await queue(ob, org, { created_at: new Date(day + 60_000).toISOString() })
  const scheduled = await queue(ob, org, { created_at: new Date(day + 60_000).toISOString(), scheduled_at: later }, 'scheduled')
  await queue(ob, org, { created_at: new Date(day + 60_000).toISOString(), scheduled_at: later }, 'scheduled') // canceled, never taken
  assert.deepEqual(await sentPerHour(), [1, 0, 0, 0, 0, 0], 'accepted: only the message sent at once is sent')
  // the engine records the message again on every delivery, and takes it up at its time
  await store.recordQueued(scheduled, 'queued')
  assert.equal(await store.recordSent(scheduled, day + 3 * HOUR + 5_000), true)
  assert.equal(await store.recordSent(scheduled, day + 4 * HOUR), false, 'a redelivery counts nothing')
  assert.equal(await store.recordSent(now, day + 4 * HOUR), false, 'a message sent at once was counted at acceptance')
  assert.deepEqual(await sentPerHour(), [1, 0, 0, 1, 0, 0])
  assert.deepEqual(await sentPerHour('&stream=transactional'), [1, 0, 0, 1, 0, 0], 'and in its stream\'s counts')
})

test('a message row counts its opens and clicks, each event once, and carries the latest bounce\'s reason', async () => {
  const store = new MessageStore(ob.proc.redis)
  const at = (min: number): Date => new Date(Date.now() - 20 * 24 * HOUR + min * 60_000) // out of the ranges above
  const read = await queue(ob, org, { created_at: at(0).toISOString(), subject: 'Row counts', to: ['a@example.net', 'b@example.net'] })
  const quietMsg = await queue(ob, org, { created_at: at(0).toISOString(), subject: 'No events' })
  const opened = event(org, read.id, 'opened', at(2))
  const bounced = event(org, read.id, 'bounced', at(5), { bounce_code: '550', bounce_message: '5.1.1 mailbox unknown' })
  for (const e of [event(org, read.id, 'delivered', at(1)), opened, opened, event(org, read.id, 'opened', at(3)),
    event(org, read.id, 'clicked', at(4)), bounced]) {
    await store.applyEvent(e)
  }
  const r = await ob.request('GET', '/v1/messages?limit=100', { key })
  assert.equal(r.status, 200, r.text)
  const row = (r.body.data as Array<Record<string, unknown>>).find((m) => m.id === read.id)!
  assert.deepEqual([row.opened_count, row.clicked_count, row.bounce_reason], [2, 1, '550 5.1.1 mailbox unknown'])
  const quiet = (r.body.data as Array<Record<string, unknown>>).find((m) => m.id === quietMsg.id)!
  assert.deepEqual([quiet.opened_count, quiet.clicked_count, 'bounce_reason' in quiet], [0, 0, false])
})
