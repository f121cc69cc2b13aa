import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ApiError } from '../../protocol/mod.ts'
import {
  HARD_BOUNCE_ON_STREAM, IMPORT_MAX_ADDRESSES, IMPORT_REFUSED_LISTED, checkImport, checkLines, csvLines, decodeEntries, encodeEntries,
  importLines, jsonLines
} from '../../gateway/control/suppression_import.ts'
import runImportCheck from '../../gateway/import_check_worker.ts'
import { cpuMs, grewAboutLinearly } from '../helpers/work.ts'

const NOW = Date.parse('2026-11-28T12:00:00Z')
const JSON_TYPE = 'application/json'

function code (fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (err) {
    return err instanceof ApiError ? `${err.status} ${err.code}` : String(err)
  }
  return undefined
}

test('CSV: header in any order, quoted fields, CRLF, a BOM and blank lines; each bad line refused with its number', async () => {
  const csv = '\uFEFFreason,EMAIL,expires_at\r\n' +
    'manual,One@Example.com,2027-01-01T00:00:00Z\r\n' +
    '\r\n' +
    'complaint,"two@example.com",\n' +
    ',"odd""quote@example.com",\n' +
    'manual,not-an-address,\n' +
    'hard_bounce,three@example.com,2027-01-01T00:00:00Z\n' +
    'manual,four@example.com,yesterday\n' +
    'manual,five@example.com,2026-01-01T00:00:00Z\n' +
    'spam,six@example.com,\n' +
    'manual,"seven@example.com\n' +
    'manual,eight@example.com\n' +
    'manual,one@example.com,\n'
  const lines = csvLines(csv)
  const { entries, summary } = await checkLines(lines, NOW)
  assert.deepEqual(entries, [
    { email: 'one@example.com', reason: 'manual', expiresAt: '2027-01-01T00:00:00.000Z' },
    { email: 'two@example.com', reason: 'complaint' },
    { email: 'odd"quote@example.com', reason: 'manual' }
  ])
  assert.equal(summary.already_suppressed, 1, 'one@example.com given twice')
  assert.deepEqual(summary.refused.map((r) => [r.line, r.reason]), [
    [6, 'email is not an address'],
    [7, 'expires_at is only for reason manual'],
    [8, 'expires_at must be an ISO 8601 date-time with a zone (2027-01-31T00:00:00Z)'],
    [9, 'expires_at must be in the future'],
    [10, 'reason must be one of hard_bounce, complaint, unsubscribe, manual'],
    [11, 'must have 3 fields, quoted where needed'],
    [12, 'must have 3 fields, quoted where needed']
  ])
  assert.equal(summary.refused_count, 7)
  assert.equal(summary.refused[1]!.email, 'three@example.com')
})

test('CSV with only an email column, and headers that are refused as a whole (400)', async () => {
  const { entries } = await checkLines(csvLines('email\na@example.com\nb@example.com'), NOW)
  assert.deepEqual(entries.map((e) => e.email), ['a@example.com', 'b@example.com'])
  assert.deepEqual(csvLines('email\n'), [])
  for (const header of ['', 'address', 'email,email', 'email,name', 'a@example.com']) {
    assert.equal(code(() => csvLines(`${header}\nx@example.com`)), '400 validation_error', header)
  }
})

test('JSON: per-item problems are refused lines; a wrong shape, type or size is refused as a whole', async () => {
  const body = {
    addresses: [
      { email: 'a@example.com' }, { email: 'b@example.com', reason: 'unsubscribe' }, 'c@example.com',
      { email: 'd@example.com', name: 'D' }, { email: 42 }, { email: 'e@example.com', expires_at: '2027-02-01T10:00:00+01:00' }
    ]
  }
  const { entries, summary } = await checkLines(jsonLines(Buffer.from(JSON.stringify(body)), JSON_TYPE), NOW)
  assert.deepEqual(entries, [
    { email: 'a@example.com', reason: 'manual' }, { email: 'b@example.com', reason: 'unsubscribe' },
    { email: 'e@example.com', reason: 'manual', expiresAt: '2027-02-01T09:00:00.000Z' }
  ])
  assert.deepEqual(summary.refused.map((r) => [r.line, r.reason]), [
    [3, 'must be an object {email, reason?, expires_at?, stream?}'], [4, 'name is not a field of an address'],
    [5, 'email is not an address']
  ])
  assert.equal(code(() => jsonLines(Buffer.from('{"addresses": 1}'), JSON_TYPE)), '400 validation_error')
  assert.equal(code(() => jsonLines(Buffer.from('[]'), JSON_TYPE)), '400 validation_error')
  assert.equal(code(() => jsonLines(Buffer.from('{"addresses": [], "x": 1}'), JSON_TYPE)), '400 validation_error')
  assert.equal(code(() => importLines(Buffer.from('email\n'), 'text/plain')), '400 validation_error')
  const tooMany = JSON.stringify({ addresses: Array.from({ length: IMPORT_MAX_ADDRESSES + 1 }, () => ({ email: 'a@example.com' })) })
  assert.equal(code(() => jsonLines(Buffer.from(tooMany), JSON_TYPE)), '413 payload_too_large')
  const csvTooMany = 'email\n' + 'a@example.com\n'.repeat(IMPORT_MAX_ADDRESSES + 1)
  assert.equal(code(() => csvLines(csvTooMany)), '413 payload_too_large')
  assert.equal(csvLines('email\n' + 'a@example.com\n'.repeat(IMPORT_MAX_ADDRESSES)).length, IMPORT_MAX_ADDRESSES)
})

test('stream: an entry of a broadcast stream the organisation has, every stream when empty; others refused by line', async () => {
  const has = (id: string): boolean => id === 'transactional' || id === 'news'
  const csv = 'email,reason,created_at,expires_at,message_id,stream\n' +
    'a@example.com,unsubscribe,2026-11-01T00:00:00.000Z,,msg_1,news\n' +
    'a@example.com,hard_bounce,2026-11-01T00:00:00.000Z,,,\n' +
    'b@example.com,manual,,,,transactional\n' +
    'c@example.com,complaint,,,,promo\n' +
    'd@example.com,complaint,,,,Not A Stream\n' +
    'a@example.com,complaint,,,,news\n'
  const { entries, summary } = await checkLines(csvLines(csv), NOW, has)
  assert.deepEqual(entries, [
    { email: 'a@example.com', reason: 'unsubscribe', stream: 'news' },
    { email: 'a@example.com', reason: 'hard_bounce' },
    { email: 'b@example.com', reason: 'manual' }
  ])
  assert.deepEqual(summary.refused.map((r) => [r.line, r.reason]), [
    [5, 'stream promo is not a message stream of this organisation'],
    [6, 'stream must be a stream id: 1 to 40 lower-case letters, digits and dashes']
  ])
  assert.equal(summary.already_suppressed, 1, 'a@example.com given twice for news')
  // without the column (an export made before it existed) every entry is for every stream
  const old = await checkLines(csvLines('email,reason,created_at,expires_at,message_id\na@example.com,unsubscribe,,,\n'), NOW, has)
  assert.deepEqual(old.entries, [{ email: 'a@example.com', reason: 'unsubscribe' }])
  const json = {
    addresses: [{ email: 'e@example.com', reason: 'unsubscribe', stream: 'news' }, { email: 'f@example.com', stream: 'promo' }]
  }
  const fromJson = await checkLines(jsonLines(Buffer.from(JSON.stringify(json)), JSON_TYPE), NOW, has)
  assert.deepEqual(fromJson.entries, [{ email: 'e@example.com', reason: 'unsubscribe', stream: 'news' }])
  assert.deepEqual(fromJson.summary.refused, [
    { line: 2, email: 'f@example.com', reason: 'stream promo is not a message stream of this organisation' }
  ])
})

test('a hard_bounce is for every stream: one naming a broadcast stream is refused; the other reasons may name one', async () => {
  const has = (id: string): boolean => id === 'transactional' || id === 'news'
  const csv = 'email,reason,stream\n' +
    'a@example.com,hard_bounce,news\n' +
    'b@example.com,hard_bounce,\n' +
    'c@example.com,hard_bounce,transactional\n' +
    'd@example.com,manual,news\n' +
    'e@example.com,unsubscribe,news\n' +
    'f@example.com,complaint,news\n' +
    'g@example.com,hard_bounce,promo\n'
  const { entries, summary } = await checkLines(csvLines(csv), NOW, has)
  assert.deepEqual(entries, [
    { email: 'b@example.com', reason: 'hard_bounce' },
    { email: 'c@example.com', reason: 'hard_bounce' },
    { email: 'd@example.com', reason: 'manual', stream: 'news' },
    { email: 'e@example.com', reason: 'unsubscribe', stream: 'news' },
    { email: 'f@example.com', reason: 'complaint', stream: 'news' }
  ])
  assert.deepEqual(summary.refused, [
    { line: 2, email: 'a@example.com', reason: HARD_BOUNCE_ON_STREAM },
    { line: 8, email: 'g@example.com', reason: 'stream promo is not a message stream of this organisation' }
  ])
  assert.equal(HARD_BOUNCE_ON_STREAM, 'a hard_bounce applies to every stream; leave stream empty')
  const json = { addresses: [{ email: 'h@example.com', reason: 'hard_bounce', stream: 'news' }] }
  const fromJson = await checkLines(jsonLines(Buffer.from(JSON.stringify(json)), JSON_TYPE), NOW, has)
  assert.deepEqual([fromJson.entries, fromJson.summary.refused], [[], [{ line: 1, email: 'h@example.com', reason: HARD_BOUNCE_ON_STREAM }]])
})

test('the report lists at most IMPORT_REFUSED_LISTED refused lines and counts them all', async () => {
  const { summary } = await checkLines(csvLines('email\n' + 'bad\n'.repeat(IMPORT_REFUSED_LISTED + 10)), NOW)
  assert.equal(summary.refused.length, IMPORT_REFUSED_LISTED)
  assert.equal(summary.refused_count, IMPORT_REFUSED_LISTED + 10)
})

function csvOf (n: number): string {
  let s = 'email,reason,expires_at\n'
  for (let i = 0; i < n; i++) {
    s += i % 5 === 0 ? `"weird,""${i}""@x",manual,\n` : `user${i}@dest${i % 50}.example,manual,2027-01-01T00:00:00Z\n`
  }
  return s
}

function jsonOf (n: number): Buffer {
  const addresses = Array.from({ length: n }, (_, i) => ({ email: `user${i}@dest${i % 50}.example`, reason: 'complaint' }))
  return Buffer.from(JSON.stringify({ addresses }))
}

test('parsing and checking an import grows linearly with its size (CSV and JSON)', async () => {
  const n = 10_000
  const csvSmall = csvOf(n)
  const csvLarge = csvOf(8 * n)
  const jsonSmall = jsonOf(n)
  const jsonLarge = jsonOf(8 * n)
  const run = async (csv: string, json: Buffer): Promise<void> => {
    await checkLines(csvLines(csv), NOW)
    await checkLines(jsonLines(json, JSON_TYPE), NOW)
  }
  const small = await cpuMs(async () => { await run(csvSmall, jsonSmall) })
  const large = await cpuMs(async () => { await run(csvLarge, jsonLarge) })
  assert.ok(grewAboutLinearly(small, large), `${small} ms for ${n} lines, ${large} ms for ${8 * n}`)
  // one long line costs no more than its length either
  const long = 'email\n' + 'a'.repeat(5_000_000) + '@example.com\n'
  const { summary } = await checkLines(csvLines(long), NOW)
  assert.equal(summary.refused[0]!.reason, 'line longer than 1024 characters')
  assert.equal(summary.refused[0]!.email.length, 254)
})

test('checked entries cross from the checking thread as one string and come back as they were', async () => {
  const csv = 'email,reason,expires_at,stream\n' +
    'a@example.com,,,\n' +
    'b@example.com,manual,2027-01-01T00:00:00Z,\n' +
    'c@example.com,unsubscribe,,news\n' +
    'd@example.com,complaint,,transactional\n' +
    'e@example.com,unsubscribe,,promo\n'
  const checked = await checkImport(Buffer.from(csv), 'text/csv', ['transactional', 'news'], NOW)
  const { entries, summary } = await checkLines(csvLines(csv), NOW, (id) => id === 'transactional' || id === 'news')
  assert.deepEqual(await decodeEntries(checked.entries), entries)
  assert.deepEqual(checked.summary, summary)
  assert.deepEqual(summary.refused, [
    { line: 6, email: 'e@example.com', reason: 'stream promo is not a message stream of this organisation' }
  ])
  assert.deepEqual(await decodeEntries(encodeEntries([])), [])
})

test('the thread answers a body that is not an import with the refusal the route sends, not a thrown error', async () => {
  const task = { contentType: JSON_TYPE, streams: ['transactional'], now: NOW }
  assert.deepEqual(await runImportCheck({ ...task, raw: Buffer.from('{"addresses": 1}') }), {
    refusal: {
      code: 'validation_error',
      message: 'addresses: must be an array of {email, reason?, expires_at?, stream?}',
      field: 'addresses',
      errors: [{ field: 'addresses', message: 'must be an array of {email, reason?, expires_at?, stream?}' }]
    }
  })
  const addresses = Array.from({ length: IMPORT_MAX_ADDRESSES + 1 }, () => ({ email: 'a@example.com' }))
  const many = Buffer.from(JSON.stringify({ addresses }))
  const tooMany = await runImportCheck({ ...task, raw: many })
  assert.equal(tooMany !== undefined && 'refusal' in tooMany ? tooMany.refusal.code : undefined, 'payload_too_large')
  const fine = await runImportCheck({ ...task, raw: Buffer.from('{"addresses": [{"email": "a@example.com"}]}') })
  assert.equal(fine !== undefined && 'entries' in fine ? fine.entries : undefined, 'a@example.com\tmanual\t\t\n')
})
