import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { suppressionKey } from '../../../stores/control_plane/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { eventually, sleepUntil } from '../../helpers/waiting.ts'

let ob: TestOutbox
let org: TestOrg
let other: TestOrg
let readKey: string
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  other = await ob.org()
  readKey = await ob.key(org, ['read'])
})
after(async () => { await ob.close() })

const csv = (text: string): { rawBody: string, headers: Record<string, string> } =>
  ({ rawBody: text, headers: { 'content-type': 'text/csv' } })

async function listAll (key: string, query = ''): Promise<Array<Record<string, string>>> {
  const out: Array<Record<string, string>> = []
  let cursor: string | null = null
  do {
    const r = await ob.request('GET', `/v1/suppressions?limit=100${query}${cursor !== null ? `&cursor=${cursor}` : ''}`, { key })
    assert.equal(r.status, 200, r.text)
    out.push(...r.body.data)
    cursor = r.body.has_more === true ? r.body.next_cursor : null
  } while (cursor !== null)
  return out
}

test('a JSON import adds every valid address, reports each refused line, and leaves existing entries as they were', async () => {
  await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'kept@import.example' } })
  const r = await ob.request('POST', '/v1/suppressions/import', {
    key: org.adminKey,
    body: {
      addresses: [
        { email: 'A@import.example' }, { email: 'b@import.example', reason: 'complaint' },
        { email: 'kept@import.example', reason: 'hard_bounce' },
        { email: 'nope' }, { email: 'c@import.example', expires_at: '2999-01-01T00:00:00Z' }, { email: 'a@import.example' }
      ]
    }
  })
  assert.equal(r.status, 200, r.text)
  assert.deepEqual(r.body, {
    imported: 3,
    already_suppressed: 2,
    refused_count: 1,
    refused: [{ line: 4, email: 'nope', reason: 'email is not an address' }],
    imported_by_reason: { hard_bounce: 0, complaint: 1, unsubscribe: 0, manual: 2 }
  })
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'a@IMPORT.example'), true)
  const kept = await ob.request('GET', '/v1/suppressions?email=kept%40import.example', { key: readKey })
  assert.equal(kept.body.data[0].reason, 'manual')
  const c = await ob.request('GET', '/v1/suppressions?email=c%40import.example', { key: readKey })
  assert.equal(c.body.data[0].expires_at, '2999-01-01T00:00:00.000Z')
  const log = await ob.request('GET', '/v1/audit-log?action=suppression.imported', { key: org.adminKey })
  assert.equal(log.status, 200, log.text)
  assert.equal(log.body.data.length, 1, 'the import is one entry of the audit log')
  assert.equal(log.body.data[0].count, 3)
  assert.deepEqual(log.body.data[0].changes.imported_by_reason, { hard_bounce: 0, complaint: 1, unsubscribe: 0, manual: 2 })
  assert.equal(log.body.data[0].changes.refused, 1)
})

test('a CSV import of 5,000 addresses lands in pages in address order, and another organisation sees none of it', async () => {
  const lines = ['email,reason']
  for (let i = 0; i < 5000; i++) lines.push(`bulk${String(i).padStart(5, '0')}@csv.example,${i % 2 === 0 ? 'unsubscribe' : ''}`)
  lines.push('"broken@csv.example,manual')
  const r = await ob.request('POST', '/v1/suppressions/import', { key: org.adminKey, ...csv(lines.join('\r\n') + '\r\n') })
  assert.equal(r.status, 200, r.text)
  assert.equal(r.body.imported, 5000)
  assert.equal(r.body.imported_by_reason.unsubscribe, 2500)
  assert.deepEqual(r.body.refused, [{ line: 5002, email: '"broken@csv.example,manual', reason: 'must have 2 fields, quoted where needed' }])
  const mine = (await listAll(readKey)).filter((s) => s.email.endsWith('@csv.example'))
  assert.equal(mine.length, 5000)
  assert.deepEqual(mine.map((s) => s.email), mine.map((s) => s.email).sort())

  assert.deepEqual(await listAll(other.adminKey), [])
  const theirs = await ob.request('GET', '/v1/suppressions?email=bulk00001%40csv.example', { key: other.adminKey })
  assert.deepEqual(theirs.body.data, [])
  const exported = await ob.request('GET', '/v1/suppressions/export', { key: other.adminKey })
  assert.equal(exported.text, 'email,reason,created_at,expires_at,message_id,stream\n')
  // the other organisation's import of the same address is its own entry and changes nothing here
  const again = await ob.request('POST', '/v1/suppressions/import', { key: other.adminKey, ...csv('email\nbulk00001@csv.example\n') })
  assert.equal(again.body.imported, 1)
  assert.equal((await ob.request('DELETE', '/v1/suppressions/bulk00001%40csv.example', { key: other.adminKey })).status, 204)
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'bulk00001@csv.example'), true)
})

test('an import refused as a whole: a read key 403, another Content-Type or header 400, too many addresses 413', async () => {
  assert.equal((await ob.request('POST', '/v1/suppressions/import', { key: readKey, ...csv('email\nx@y.example\n') })).status, 403)
  const type = await ob.request('POST', '/v1/suppressions/import', {
    key: org.adminKey, rawBody: 'email\nx@y.example\n', headers: { 'content-type': 'text/plain' }
  })
  assert.equal(type.status, 400)
  assert.equal(type.body.error.field, 'Content-Type')
  const header = await ob.request('POST', '/v1/suppressions/import', { key: org.adminKey, ...csv('mail\nx@y.example\n') })
  assert.equal(header.status, 400)
  assert.equal(header.body.error.field, 'header')
  const shape = await ob.request('POST', '/v1/suppressions/import', { key: org.adminKey, body: { emails: [] } })
  assert.equal(shape.status, 400)
  const tooMany = 'email\n' + 'x@y.example\n'.repeat(100_001)
  const many = await ob.request('POST', '/v1/suppressions/import', { key: org.adminKey, ...csv(tooMany) })
  assert.equal(many.status, 413)
  assert.equal(many.body.error.code, 'payload_too_large')
  // past the import's 32 MB body limit, which is larger than the 10 MB of every other route
  const huge = await ob.request('POST', '/v1/suppressions/import', { key: org.adminKey, ...csv('email\n' + 'x'.repeat(33 * 1024 * 1024)) })
  assert.equal(huge.status, 413)
  const eleven = Buffer.alloc(11 * 1024 * 1024, 0x20)
  const elsewhere = await ob.request('POST', '/v1/suppressions', {
    key: org.adminKey, rawBody: eleven, headers: { 'content-type': 'application/json' }
  })
  assert.equal(elsewhere.status, 413)
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'x@y.example'), false)
})

test('filters: reason, since and until on the list and the export; bad values are 400 naming the parameter', async () => {
  const complaints = await listAll(readKey, '&reason=complaint')
  assert.deepEqual(complaints.map((s) => s.email), ['b@import.example'])
  const all = await listAll(readKey)
  const times = all.map((s) => s.created_at).sort()
  const mid = times[Math.floor(times.length / 2)]!
  const since = await listAll(readKey, `&since=${encodeURIComponent(mid)}`)
  const until = await listAll(readKey, `&until=${encodeURIComponent(mid)}`)
  assert.ok(since.every((s) => s.created_at >= mid) && until.every((s) => s.created_at < mid))
  assert.equal(since.length + until.length, all.length)
  for (const [q, field] of [['reason=spam', 'reason'], ['since=yesterday', 'since'], ['until=2026-13-01T00:00:00Z', 'until']]) {
    for (const path of ['/v1/suppressions', '/v1/suppressions/export']) {
      const r = await ob.request('GET', `${path}?${q}`, { key: readKey })
      assert.equal(r.status, 400, `${path}?${q}`)
      assert.equal(r.body.error.field, field)
    }
  }
  const exported = await ob.request('GET', '/v1/suppressions/export?reason=complaint', { key: readKey })
  assert.equal(exported.status, 200)
  assert.match(exported.headers.get('content-type')!, /^text\/csv/)
  const rows = exported.text.trim().split('\n')
  assert.equal(rows.length, 2)
  assert.match(rows[1]!, /^b@import\.example,complaint,\d{4}-/)
})

test('the export streams every entry in address order, and what it writes imports back unchanged', async () => {
  const r = await ob.request('GET', '/v1/suppressions/export', { key: readKey })
  assert.equal(r.status, 200)
  assert.equal(r.headers.get('transfer-encoding'), 'chunked')
  assert.equal(r.headers.get('content-disposition'), 'attachment; filename="suppressions.csv"')
  const [header, ...rows] = r.text.trimEnd().split('\n')
  assert.equal(header, 'email,reason,created_at,expires_at,message_id,stream')
  const listed = await listAll(readKey)
  assert.deepEqual(rows.map((row) => row.split(',')[0]), listed.map((s) => s.email))
  assert.ok(rows.some((row) => row.startsWith('c@import.example,manual,') && row.includes(',2999-01-01T00:00:00.000Z,')))
  const back = await ob.request('POST', '/v1/suppressions/import', { key: other.adminKey, ...csv(r.text) })
  assert.equal(back.status, 200, back.text)
  assert.equal(back.body.refused_count, 0)
  assert.equal(back.body.imported + back.body.already_suppressed, rows.length)
  const theirs = await ob.request('GET', '/v1/suppressions/export', { key: other.adminKey })
  const strip = (text: string): string[] => text.trimEnd().split('\n').map((row) => {
    const f = row.split(',')
    return `${f[0]},${f[1]},${f[3]}`
  })
  assert.deepEqual(strip(theirs.text), strip(r.text), 'address, reason and expiry come back as they were')
  assert.equal((await ob.request('GET', '/v1/suppressions/export?environment=test', { key: readKey })).text.split('\n')[1], '')
})

test('expires_at: the entry suppresses until then, is absent at once after, and the sweep removes it', async () => {
  const sendKey = await ob.key(org, ['send'])
  // Scheduled a day ahead: delivered now, the message to this unroutable address would bounce, and the engine's
  // `hard_bounce` entry would take the key the sweep is to empty.
  const send = async (to: string) => await ob.request('POST', '/v1/messages/send', {
    key: sendKey,
    body: { from: `App <hello@${org.domain}>`, to, subject: 'Hi', text: 'Hi', scheduled_at: new Date(Date.now() + 86_400_000).toJSON() }
  })
  const past = await ob.request('POST', '/v1/suppressions', {
    key: org.adminKey, body: { email: 'p@exp.example', expires_at: '2020-01-01T00:00:00Z' }
  })
  assert.equal(past.status, 400)
  assert.equal(past.body.error.field, 'expires_at')
  const soon = new Date(Date.now() + 1500).toISOString()
  const added = await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'Soon@exp.example', expires_at: soon } })
  assert.equal(added.status, 201, added.text)
  assert.equal(added.body.expires_at, soon)
  assert.equal((await send('soon@exp.example')).status, 422)
  // the entry's own expiry, the clock this test set
  await sleepUntil(Date.parse(soon) + 1)
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'soon@exp.example'), false)
  assert.notEqual(ob.proc.cp.suppressions.get(suppressionKey(org.orgId, 'soon@exp.example')), undefined, 'still stored until the sweep')
  const sent = await send('soon@exp.example')
  assert.equal(sent.status, 202, sent.text)
  assert.equal(sent.body.suppressed, undefined)
  assert.deepEqual((await ob.request('GET', '/v1/suppressions?email=soon%40exp.example', { key: readKey })).body.data, [])
  assert.equal((await ob.request('DELETE', '/v1/suppressions/soon%40exp.example', { key: org.adminKey })).status, 404)

  // a hard bounce of an expired address suppresses it again, without expiry
  const expiredKey = suppressionKey(org.orgId, 'again@exp.example')
  await ob.proc.cp.suppressions.put(expiredKey, {
    org_id: org.orgId,
    email: 'again@exp.example',
    reason: 'manual',
    created_at: '2026-01-01T00:00:00.000Z',
    expires_at: '2026-01-02T00:00:00.000Z'
  })
  const re = await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'again@exp.example' } })
  assert.equal(re.status, 201)
  assert.equal(re.body.expires_at, undefined)

  // the gateway's own periodic sweep may have removed it first: either way it goes, once
  await ob.proc.cp.suppressionLists.sweep()
  await eventually(() => ob.proc.cp.suppressions.get(suppressionKey(org.orgId, 'soon@exp.example')) === undefined, 'the swept entry gone')
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'again@exp.example'), true, 'the replaced entry is not swept')
  assert.equal(await ob.proc.cp.suppressionLists.sweep(), 0)
})
