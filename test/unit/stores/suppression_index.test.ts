import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { SuppressionRecord } from '../../../protocol/mod.ts'
import { SuppressionList, suppressionKey } from '../../../stores/control_plane/suppression_list.ts'
import { OrderedList } from '../../../stores/control_plane/ordered_list.ts'
import type { KvMirror } from '../../../stores/control_plane/kv_mirror.ts'
import { cpuMs } from '../../helpers/work.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/**
 * The part of a KvMirror the suppression list reads (all, get, revision, onChange), held in memory as the
 * mirror holds it: each entry a freshly parsed record under its store key. `apply` is what the watch does.
 */
class MemoryMirror {
  readonly entries = new Map<string, { value: SuppressionRecord, revision: number }>()
  private readonly listeners: Array<(key: string, value: SuppressionRecord | undefined, old: SuppressionRecord | undefined) => void> = []
  private seq = 0
  get (key: string): SuppressionRecord | undefined { return this.entries.get(key)?.value }
  revision (key: string): number | undefined { return this.entries.get(key)?.revision }
  * all (): Generator<[string, SuppressionRecord]> { for (const [k, e] of this.entries) yield [k, e.value] }
  onChange (fn: (key: string, value: SuppressionRecord | undefined, old: SuppressionRecord | undefined) => void): () => void {
    this.listeners.push(fn)
    return () => {}
  }

  apply (key: string, value: SuppressionRecord | undefined): void {
    const old = this.entries.get(key)?.value
    if (value === undefined) this.entries.delete(key)
    else this.entries.set(key, { value: JSON.parse(JSON.stringify(value)) as SuppressionRecord, revision: ++this.seq })
    for (const fn of this.listeners) fn(key, this.entries.get(key)?.value, old)
  }

  list (): SuppressionList {
    return new SuppressionList(this as unknown as KvMirror<SuppressionRecord>)
  }
}

const REASONS = ['hard_bounce', 'complaint', 'unsubscribe', 'manual'] as const
const orgId = (o: number): string => `org_${o.toString(36).padStart(26, '0')}`
const email = (o: number, i: number): string => `user.${(i * 7919 % 1_000_003).toString(36)}.${i}@dest${o % 97}.example`

function record (o: number, i: number): SuppressionRecord {
  return {
    org_id: orgId(o),
    email: email(o, i),
    reason: REASONS[i % 4]!,
    created_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString()
  }
}

/** `orgs` organisations of `each` entries, loaded as the watch loads a bucket (a parse of each stored value). */
function mirrorOf (orgs: number, each: number): MemoryMirror {
  const m = new MemoryMirror()
  let seq = 0
  for (let o = 0; o < orgs; o++) {
    for (let i = 0; i < each; i++) {
      const r = record(o, i)
      m.entries.set(suppressionKey(r.org_id, r.email), { value: JSON.parse(JSON.stringify(r)) as SuppressionRecord, revision: ++seq })
    }
  }
  return m
}

test('the ordered list stays in key order through random inserts, replacements and deletes', () => {
  const list = new OrderedList<number>()
  const reference = new Map<string, number>()
  let x = 12345
  const next = (): number => { x = (x * 1103515245 + 12345) % 2 ** 31; return x }
  for (let step = 0; step < 20_000; step++) {
    const key = `k${next() % 5000}`
    if (next() % 3 === 0) {
      assert.equal(list.delete(key), reference.delete(key))
    } else {
      list.set(key, step)
      reference.set(key, step)
    }
  }
  const expected = [...reference.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))
  assert.deepEqual([...list.from()], expected)
  assert.equal(list.size, expected.length)
  const mid = expected[Math.floor(expected.length / 2)]![0]
  assert.deepEqual([...list.from(mid)], expected.filter(([k]) => k > mid))
  assert.deepEqual([...list.from('k25000x')].map(([k]) => k), expected.filter(([k]) => k > 'k25000x').map(([k]) => k))
  for (const [k, v] of expected.slice(0, 50)) assert.equal(list.get(k), v)
})

test('an entry of one broadcast stream suppresses that stream only, sits after the address\'s own entry, and pages by both', () => {
  const m = mirrorOf(1, 0)
  const list = m.list()
  const org = orgId(0)
  const news: SuppressionRecord = {
    org_id: org, email: 'b@x.example', reason: 'unsubscribe', created_at: '2026-06-01T00:00:00.000Z', stream: 'news'
  }
  m.apply(suppressionKey(org, news.email, 'news'), news)
  assert.notEqual(suppressionKey(org, news.email, 'news'), suppressionKey(org, news.email))
  assert.equal(suppressionKey(org, news.email, 'transactional'), suppressionKey(org, news.email), 'transactional is every stream')
  assert.equal(list.isSuppressed(org, 'b@x.example', Date.now(), 'news'), true)
  assert.equal(list.isSuppressed(org, 'b@x.example', Date.now(), 'promo'), false)
  assert.equal(list.isSuppressed(org, 'b@x.example'), false, 'a transactional send is not blocked')
  const all: SuppressionRecord = { org_id: org, email: 'b@x.example', reason: 'hard_bounce', created_at: '2026-06-02T00:00:00.000Z' }
  m.apply(suppressionKey(org, all.email), all)
  assert.equal(list.isSuppressed(org, 'b@x.example', Date.now(), 'promo'), true, 'an entry for every stream blocks every stream')
  const both = list.page(org, { limit: 10 }).items
  assert.deepEqual(both.map((r) => r.stream), [undefined, 'news'])
  assert.deepEqual(list.page(org, { limit: 10, after: 'b@x.example' }).items.map((r) => r.stream), ['news'])
  assert.deepEqual(list.page(org, { limit: 10, after: 'b@x.example news' }).items, [])
  assert.deepEqual(list.page(org, { limit: 10, filter: { stream: 'promo' } }).items.map((r) => r.reason), ['hard_bounce'])
  // what an erase deletes: the address's entries, and none of the addresses sorting beside them
  for (const neighbour of ['b@x.exampl', 'b@x.example.org', 'b@x.examplf', 'a@x.example']) {
    m.apply(suppressionKey(org, neighbour), { ...all, email: neighbour })
    m.apply(suppressionKey(org, neighbour, 'news'), { ...news, email: neighbour })
  }
  assert.deepEqual(list.entriesOf(org, ' B@X.example ').map((r) => [r.email, r.stream]),
    [['b@x.example', undefined], ['b@x.example', 'news']])
  m.apply(suppressionKey(org, all.email), undefined)
  assert.deepEqual(list.entriesOf(org, 'b@x.example').map((r) => r.stream), ['news'])
  assert.deepEqual(list.entriesOf(org, 'c@x.example'), [])
  assert.deepEqual(list.entriesOf(orgId(1), 'b@x.example'), [])
})

test('whether an organisation holds entries of one stream follows the watch, per organisation and stream', () => {
  const m = mirrorOf(2, 3)
  const list = m.list()
  const [org, other] = [orgId(0), orgId(1)]
  const entry = (email: string): SuppressionRecord =>
    ({ org_id: org, email, reason: 'unsubscribe', created_at: '2026-06-01T00:00:00.000Z', stream: 'news' })
  assert.equal(list.hasStreamEntries(org, 'news'), false, 'entries of every stream count for none')
  m.apply(suppressionKey(org, 'a@x.example', 'news'), entry('a@x.example'))
  m.apply(suppressionKey(org, 'b@x.example', 'news'), entry('b@x.example'))
  assert.equal(list.hasStreamEntries(org, 'news'), true)
  assert.equal(list.hasStreamEntries(other, 'news'), false, 'another organisation holds none')
  assert.equal(list.hasStreamEntries(org, 'promo'), false)
  m.apply(suppressionKey(org, 'a@x.example', 'news'), { ...entry('a@x.example'), reason: 'complaint' })
  m.apply(suppressionKey(org, 'b@x.example', 'news'), undefined)
  assert.equal(list.hasStreamEntries(org, 'news'), true, 'one is left after a replace and a delete')
  m.apply(suppressionKey(org, 'a@x.example', 'news'), undefined)
  assert.equal(list.hasStreamEntries(org, 'news'), false)
  // an entry loaded with the bucket counts like one the watch brings
  m.apply(suppressionKey(org, 'c@x.example', 'news'), entry('c@x.example'))
  assert.equal(m.list().hasStreamEntries(org, 'news'), true)
})

test('pages follow the watch: added, replaced and deleted entries, filters, expiry, and other organisations kept apart', () => {
  const m = mirrorOf(3, 30)
  const list = m.list()
  const org = orgId(1)
  const all = list.page(org, { limit: 100 }).items
  assert.equal(all.length, 30)
  assert.ok(all.every((r) => r.org_id === org))
  assert.deepEqual(all.map((r) => r.email), all.map((r) => r.email).sort())

  const added: SuppressionRecord = { org_id: org, email: 'aaa@first.example', reason: 'manual', created_at: '2026-06-01T00:00:00.000Z' }
  m.apply(suppressionKey(org, added.email), added)
  assert.equal(list.page(org, { limit: 1 }).items[0]!.email, 'aaa@first.example')
  assert.equal(list.page(org, { limit: 1 }).more, true)
  assert.equal(list.page(orgId(0), { limit: 100 }).items.length, 30, 'another organisation is unchanged')

  const expired = { ...added, expires_at: '2026-01-01T00:00:00.000Z' }
  m.apply(suppressionKey(org, added.email), expired)
  assert.notEqual(list.page(org, { limit: 1 }).items[0]!.email, 'aaa@first.example', 'an expired entry is absent at once')
  assert.equal(list.active(org, added.email), undefined)
  assert.equal(list.isSuppressed(org, 'AAA@First.example'), false)
  assert.equal(list.entry(org, added.email)?.expires_at, expired.expires_at)
  assert.equal(list.isSuppressed(org, added.email, Date.parse('2025-12-31T00:00:00Z')), true, 'before its expiry it suppresses')

  m.apply(suppressionKey(org, added.email), undefined)
  assert.equal(list.entry(org, added.email), undefined)
  assert.equal(list.count(org), 30)

  const complaints = list.page(org, { limit: 100, filter: { reason: 'complaint' } }).items
  assert.ok(complaints.length > 0 && complaints.every((r) => r.reason === 'complaint'))
  const since = all[10]!.created_at
  const until = all[20]!.created_at
  const window = list.page(org, { limit: 100, filter: { since, until } }).items
  assert.ok(window.length > 0 && window.every((r) => r.created_at >= since && r.created_at < until))

  const first = list.page(org, { limit: 7 })
  const rest = list.page(org, { limit: 100, after: first.items[6]!.email.toUpperCase() })
  assert.deepEqual([...first.items, ...rest.items].map((r) => r.email), all.map((r) => r.email))
})

/**
 * The reads of one look-up: the first page, a page from a cursor in the middle, and `?email=` (a key look-up),
 * for each of the first 10 organisations, `rounds` times.
 */
function reads (list: SuppressionList, each: number, rounds: number): void {
  for (let round = 0; round < rounds; round++) {
    for (let o = 0; o < 10; o++) {
      const org = orgId(o)
      assert.equal(list.page(org, { limit: 20 }).items.length, 20)
      list.page(org, { limit: 20, after: email(o, (round * 31 + o) % each) })
      assert.notEqual(list.active(org, email(o, (round * 17 + o) % each)), undefined)
      assert.equal(list.active(org, `absent.${round}@dest.example`), undefined)
      assert.equal(list.entriesOf(org, email(o, (round * 13 + o) % each)).length, 1) // what an erase reads
    }
  }
}

test('a page, an ?email= read and an erase\'s lookup cost about the same at 1,000,000 entries (1,000 orgs) as at 1,000', async (t) => {
  const ROUNDS = 300
  const small = mirrorOf(10, 100)
  const smallList = small.list()
  const smallMs = await cpuMs(async () => { reads(smallList, 100, ROUNDS) })

  gc()
  const heap0 = process.memoryUsage().heapUsed
  const large = mirrorOf(1000, 1000)
  gc()
  const heap1 = process.memoryUsage().heapUsed
  const largeList = large.list()
  gc()
  const heap2 = process.memoryUsage().heapUsed
  const largeMs = await cpuMs(async () => { reads(largeList, 1000, ROUNDS) })

  const n = large.entries.size
  assert.equal(n, 1_000_000)
  const mirrorBytes = (heap1 - heap0) / n
  const indexBytes = (heap2 - heap1) / n
  t.diagnostic(`reads: ${smallMs.toFixed(1)} ms CPU at 1,000 entries, ${largeMs.toFixed(1)} ms at 1,000,000`)
  t.diagnostic(`memory per entry: ${mirrorBytes.toFixed(0)} B in the mirror (record and key), ${indexBytes.toFixed(0)} B in the index`)
  // Linear in the store's size would be about 1,000 times; the floor keeps a fast small figure from deciding alone.
  assert.ok(largeMs / Math.max(smallMs, 30) < 4, `reads took ${largeMs} ms at 1,000,000 entries against ${smallMs} ms at 1,000`)
  assert.ok(indexBytes < 64, `the index takes ${indexBytes} B an entry`)
})
