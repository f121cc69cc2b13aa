import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { MessageStore } from '../../../stores/read_model/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { queue, event } from './fixtures.ts'

let ob: TestOutbox
let org: TestOrg
let key: string
const ids: string[] = []
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  key = await ob.key(org, ['read'])
  // 45 messages over 15 milliseconds, three per millisecond, so page boundaries fall inside ties.
  const base = Date.now() - 60_000
  for (let i = 0; i < 45; i++) {
    const m = await queue(ob, org, {
      created_at: new Date(base + Math.floor(i / 3)).toISOString(), to: [i % 5 === 0 ? 'Five@Example.net' : `r${i}@example.net`]
    })
    ids.push(m.id)
  }
})
after(async () => { await ob.close() })

async function all (path: string, limit: number): Promise<{ items: any[], pages: number }> {
  const items: any[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const sep = path.includes('?') ? '&' : '?'
    const r = await ob.request('GET', `${path}${sep}limit=${limit}${cursor !== null ? `&cursor=${cursor}` : ''}`, { key })
    assert.equal(r.status, 200, r.text)
    assert.ok(r.body.data.length <= limit)
    assert.equal(r.body.has_more, r.body.next_cursor !== null)
    items.push(...r.body.data)
    cursor = r.body.next_cursor
    pages++
    assert.ok(pages < 100, 'pagination terminates')
  } while (cursor !== null)
  return { items, pages }
}

test('pages of messages cover every message once, newest first', async () => {
  for (const limit of [1, 7, 20, 45, 100]) {
    const { items, pages } = await all('/v1/messages', limit)
    assert.equal(pages, Math.max(1, Math.ceil(45 / limit)), `limit ${limit}`)
    const got = items.map((m) => m.id)
    assert.equal(new Set(got).size, got.length, `no duplicates at limit ${limit}`)
    assert.deepEqual([...got].sort(), [...ids].sort(), `no gaps at limit ${limit}`)
    const times = items.map((m) => Date.parse(m.created_at))
    for (let i = 1; i < times.length; i++) assert.ok(times[i - 1]! >= times[i]!, 'newest first')
  }
})

test('the default page is 20', async () => {
  const r = await ob.request('GET', '/v1/messages', { key })
  assert.equal(r.body.data.length, 20)
  assert.equal(r.body.has_more, true)
})

test('filters: to (any recipient, case-insensitive), status, and both', async () => {
  const five = ids.filter((_, i) => i % 5 === 0)
  const byTo = await all('/v1/messages?to=five%40example.net', 4)
  assert.deepEqual(byTo.items.map((m) => m.id).sort(), [...five].sort())
  const store = new MessageStore(ob.proc.redis)
  const bounced = [ids[0]!, ids[1]!, ids[2]!, ids[10]!]
  for (const id of bounced) await store.applyEvent(event(org, id, 'bounced'))
  const byStatus = await all('/v1/messages?status=bounced', 3)
  assert.deepEqual(byStatus.items.map((m) => m.id).sort(), [...bounced].sort())
  assert.ok(byStatus.items.every((m) => m.status === 'bounced'))
  const both = await all('/v1/messages?status=bounced&to=Five%20%3Cfive%40example.net%3E', 1)
  assert.deepEqual(both.items.map((m) => m.id).sort(), [ids[0]!, ids[10]!].sort())
  const queued = await all('/v1/messages?status=queued', 50)
  assert.equal(queued.items.length, 45 - bounced.length)
})

test('events page newest first and filter by type and message', async () => {
  const store = new MessageStore(ob.proc.redis)
  const t = Date.now()
  const target = ids[20]!
  for (let i = 0; i < 12; i++) {
    await store.applyEvent(event(org, target, i % 3 === 0 ? 'clicked' : 'opened', new Date(t + Math.floor(i / 2)), { i }))
  }
  const byMessage = await all(`/v1/events?message_id=${target}`, 5)
  assert.equal(byMessage.items.length, 12)
  assert.equal(new Set(byMessage.items.map((e) => e.id)).size, 12)
  for (const e of byMessage.items) assert.deepEqual(Object.keys(e), ['id', 'type', 'timestamp', 'data'])
  const clicks = await all(`/v1/events?message_id=${target}&type=clicked`, 2)
  assert.equal(clicks.items.length, 4)
  const allClicks = await all('/v1/events?type=clicked', 3)
  assert.equal(allClicks.items.length, 4)
  assert.ok(allClicks.items.every((e) => e.type === 'clicked'))
  const everything = await all('/v1/events', 100)
  assert.ok(everything.items.length >= 12)
  const times = everything.items.map((e) => Date.parse(e.timestamp))
  for (let i = 1; i < times.length; i++) assert.ok(times[i - 1]! >= times[i]!, 'newest first')
})

test('events of another organisation\'s message are 403; an unknown message has none', async () => {
  const other = await ob.org()
  const theirs = await queue(ob, other)
  const r = await ob.request('GET', `/v1/events?message_id=${theirs.id}`, { key })
  assert.equal(r.status, 403)
  assert.equal(r.body.error.code, 'forbidden')
  const none = await ob.request('GET', '/v1/events?message_id=msg_00000000000000000000000000', { key })
  assert.equal(none.status, 200)
  assert.deepEqual(none.body, { data: [], has_more: false, next_cursor: null })
})
