import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'

/**
 * Configuration written to a JetStream store at its limit (nats-server `max_file_store`): a suppression import that
 * fills the store part-way answers 503 `store_full`, never 500, and the part it wrote is in the audit log with the
 * error that stopped it; a change asked while the store is full answers 503 `store_full` too.
 */
const STORE_MB = 24
// several whole imports fit before the store is full, so both kinds of audit entry are checked
const BATCH = 500

let nats: ServerProcess
let redis: ServerProcess
let ob: TestOutbox
let org: TestOrg
let key: string

before(async () => {
  nats = await ServerProcess.nats({ maxFileStore: STORE_MB * 1024 * 1024 })
  redis = await ServerProcess.redis()
  ob = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'all', OB_NATS_STORE_MB: String(STORE_MB) } })
  org = await ob.org()
  key = await ob.key(org, ['read', 'manage'])
})
after(async () => {
  await ob.close()
  await nats.dispose()
  await redis.dispose()
})

test('an import that fills the store answers 503 store_full, and what it wrote is audited with the error', {
  timeout: 300_000
}, async (t) => {
  let written = 0
  let refused: { status: number, body: any, retryAfter: string | null } | undefined
  // at most 60 imports (30,000 addresses, over ten times the room), so every one is on the audit log's one page
  for (let batch = 0; batch < 60 && refused === undefined; batch++) {
    const rows = Array.from({ length: BATCH }, (_, i) => `filler.${batch}.${i}.with-a-longer-local-part@store-full.example`)
    const r = await ob.request('POST', '/v1/suppressions/import', {
      key, rawBody: `email\n${rows.join('\n')}\n`, headers: { 'content-type': 'text/csv' }
    })
    if (r.status === 200) { written += r.body.imported; continue }
    refused = { status: r.status, body: r.body, retryAfter: r.headers.get('retry-after') }
  }
  t.diagnostic(`${written} entries imported before the store was full; refusal ${JSON.stringify(refused?.body)}`)
  assert.ok(refused !== undefined, 'the store never filled')
  assert.equal(refused.status, 503, JSON.stringify(refused.body))
  assert.equal(refused.body.error.code, 'store_full')
  assert.ok(refused.retryAfter !== null)

  const audit = await ob.request('GET', '/v1/audit-log?action=suppression.imported&limit=100', { key })
  assert.equal(audit.status, 200, JSON.stringify(audit.body))
  const failed = audit.body.data.filter((e: any) => e.changes?.error !== undefined)
  assert.equal(failed.length, 1, JSON.stringify(audit.body.data))
  assert.equal(failed[0].changes.error, 'store_full')
  assert.ok(failed[0].count > 0 && failed[0].count < BATCH, `the part written: ${failed[0].count}`)
  const whole = audit.body.data.filter((e: any) => e.changes?.error === undefined)
  assert.ok(whole.length > 0, 'no import was whole before the store filled')
  assert.deepEqual(whole.map((e: any) => e.count), whole.map(() => BATCH))
  assert.equal(written, whole.length * BATCH)

  // the refused import keeps what it wrote: the list holds the whole imports and the audited part, nothing else
  const exported = await ob.request('GET', '/v1/suppressions/export', { key })
  assert.equal(exported.status, 200)
  const listed = exported.text.split('\n').filter((line) => line.includes('@store-full.example'))
  assert.equal(listed.length, written + failed[0].count)

  // with the store full, a single change is refused the same way (the refused write was a window of the import:
  // room for a few single entries may be left)
  let one = await ob.request('POST', '/v1/suppressions', { key, body: { email: 'one.more.0@store-full.example' } })
  let fitted = 0
  for (; fitted < 1000 && one.status === 201; fitted++) {
    one = await ob.request('POST', '/v1/suppressions', { key, body: { email: `one.more.${fitted + 1}@store-full.example` } })
  }
  t.diagnostic(`the refused import wrote ${String(failed[0].count)}; single entries that fitted after it: ${fitted}`)
  assert.equal(one.status, 503, JSON.stringify(one.body))
  assert.equal(one.body.error.code, 'store_full')
})
