import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { jetstreamManager } from '@nats-io/jetstream'
import { ServerProcess } from '../../helpers/servers.ts'
import { AUDIT_SCAN_MAX, AuditLog, type AuditRecord } from '../../../stores/audit/mod.ts'
import { JsPublisher, ensureStreams } from '../../../stores/clients/mod.ts'

/**
 * The audit log's layout against a real nats-server: an organisation's entries read newest first across many
 * backward windows while another organisation's entries fill the stream between them; a read that would look at
 * more than AUDIT_SCAN_MAX entries stops with a cursor; and a read fetches only the organisation's own entries.
 */
let nats: ServerProcess
let nc: NatsConnection
let log: AuditLog

before(async () => {
  nats = await ServerProcess.nats()
  nc = await connect({ servers: nats.url })
  await ensureStreams(nc, { replicas: 1, messageContentRetentionDays: 1, storeBytes: 256 * 1024 * 1024 })
  log = new AuditLog(await jetstreamManager(nc), new JsPublisher(nc))
})
after(async () => {
  await nc.close()
  await nats.dispose()
})

const entry = (org: string, i: number, action = 'suppression.added'): AuditRecord => ({
  org_id: org,
  actor: { type: 'api_key', id: 'key_x' },
  address: '127.0.0.1',
  action,
  target: `t${i}`,
  changes: {},
  count: 1,
  request_id: `req_${i}`
})

async function readAll (org: string, filter = {}, limit = 100): Promise<{ targets: string[], pages: number }> {
  const targets: string[] = []
  let before: number | undefined
  let pages = 0
  for (;;) {
    const page = await log.list(org, filter, limit, before)
    pages++
    targets.push(...page.data.map((e) => e.target!))
    if (page.nextBefore === undefined) return { targets, pages }
    before = page.nextBefore
  }
}

test('newest first across windows, with another organisation\'s entries between them', async () => {
  // 3 of b's for every one of a's, then a long run of b's, then a's newest: a's entries span thousands of sequences
  for (let i = 0; i < 300; i++) {
    await Promise.all([log.record(entry('org_a', i)), log.record(entry('org_b', 3 * i)), log.record(entry('org_b', 3 * i + 1)),
      log.record(entry('org_b', 3 * i + 2))])
  }
  await Promise.all(Array.from({ length: 1500 }, async (_v, i) => await log.record(entry('org_b', 900 + i))))
  await log.record(entry('org_a', 300))
  const { targets, pages } = await readAll('org_a', {}, 50)
  assert.equal(targets.length, 301)
  assert.equal(new Set(targets).size, 301, 'each entry once')
  assert.equal(targets[0], 't300')
  const order = targets.map((t) => Number(t.slice(1)))
  assert.deepEqual(order, [...order].sort((x, y) => y - x), 'newest first')
  assert.equal(pages, 7)
})

test('a filter that leaves most entries out stops after AUDIT_SCAN_MAX looked at, with a cursor to go on', async () => {
  await log.record(entry('org_c', 0, 'api_key.rotated'))
  await Promise.all(Array.from({ length: AUDIT_SCAN_MAX + 10 }, async (_v, i) => await log.record(entry('org_c', i + 1))))
  const first = await log.list('org_c', { action: 'api_key.rotated' }, 20)
  assert.deepEqual(first.data, [])
  assert.ok(first.nextBefore !== undefined, 'a cursor to go on')
  const rest = await log.list('org_c', { action: 'api_key.rotated' }, 20, first.nextBefore)
  assert.deepEqual(rest.data.map((e) => e.target), ['t0'])
  assert.equal(rest.nextBefore, undefined)
})

test('an organisation with no entries reads an empty page', async () => {
  assert.deepEqual(await log.list('org_none', {}, 20), { data: [], seqs: [] })
})
