import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import {
  DEFAULT_LIMITS, DEFAULT_WARMUP, LIMIT_MAXIMA, PROVIDERS, REPLY_RULES, WARMUP_MAXIMA, type ReplyAction
} from '../../../protocol/egress/mod.ts'

const doc = readFileSync(new URL('../../../../docs/egress.md', import.meta.url), 'utf8')
/** The prose with its line breaks folded, so a reflowed paragraph still says the same. */
const flat = doc.replace(/\s+/g, ' ')
const rows = doc.split('\n').filter((l) => l.startsWith('| '))
const cells = (row: string): string[] => row.split('|').slice(1, -1).map((c) => c.trim())
const rowOf = (first: string): string[] | undefined => rows.map(cells).find((c) => c[0] === first)
const n = (x: number): string => x.toLocaleString('en-US')

test('docs/egress.md lists every provider with all its MX names', () => {
  for (const p of PROVIDERS) {
    const row = rowOf(`\`${p.id}\``)
    assert.ok(row !== undefined, `no row for ${p.id}`)
    assert.equal(row[1], p.name)
    assert.equal(row[2], p.mx.map((m) => `\`${m}\``).join(', '), p.id)
  }
})

test('docs/egress.md states every default limit', () => {
  const table = rows.map(cells).filter((c) => c.length === 5 && /^`[a-z]+`$/.test(c[0] ?? ''))
  assert.deepEqual(table.map((c) => c[0]), Object.keys(DEFAULT_LIMITS).map((id) => `\`${id}\``))
  for (const [id, l] of Object.entries(DEFAULT_LIMITS)) {
    const row = table.find((c) => c[0] === `\`${id}\``)
    assert.deepEqual(row, [`\`${id}\``, String(l.maxConnections), String(l.messagesPerConnection), n(l.messagesPerMinute), l.tls])
  }
  assert.ok(flat.includes(`from 1 to ${n(LIMIT_MAXIMA.maxConnections)} connections, ${n(LIMIT_MAXIMA.messagesPerConnection)} ` +
    `messages per connection and ${n(LIMIT_MAXIMA.messagesPerMinute)} messages per minute`), 'the maxima are stated')
})

test('docs/egress.md has a row for every reply rule, in order, with its provider and action', () => {
  const action = (a: ReplyAction): string => a.kind === 'slow'
    ? 'slow'
    : `${a.kind} ${a.ms >= 3_600_000 ? `${a.ms / 3_600_000} h` : `${a.ms / 60_000} min`}`
  const table = rows.map(cells).filter((c) => c.length === 5 && REPLY_RULES.some((r) => c[0] === `\`${r.id}\``))
  assert.deepEqual(table.map((c) => c[0]), REPLY_RULES.map((r) => `\`${r.id}\``), 'same rules, same order')
  for (const [i, rule] of REPLY_RULES.entries()) {
    const row = table[i] ?? []
    assert.equal(row[1], rule.provider ?? 'any', rule.id)
    assert.equal(row[3], action(rule.action), rule.id)
    if (rule.code !== undefined) assert.ok(row[2]?.includes(String(rule.code)), `${rule.id}: reply code ${rule.code}`)
    else assert.ok(row[2]?.startsWith('4xx'), `${rule.id}: transient replies only`)
  }
})

test('docs/egress.md shows the default warm-up curve, each step until the next', () => {
  const table = rows.map(cells).filter((c) => c.length === 3 && /^\d+(–\d+)?$/.test(c[0] ?? ''))
  assert.equal(table.length, DEFAULT_WARMUP.length)
  for (const [i, step] of DEFAULT_WARMUP.entries()) {
    const next = DEFAULT_WARMUP[i + 1]
    const days = next === undefined || next.day === step.day + 1 ? String(step.day) : `${step.day}–${next.day - 1}`
    assert.deepEqual(table[i], [days, n(step.perDay), n(step.perHour)])
  }
  const last = DEFAULT_WARMUP.at(-1)?.day ?? 0
  assert.ok(flat.includes(`From day ${last + 1} warm-up is complete`))
  assert.ok(flat.includes(`at most ${WARMUP_MAXIMA.day}`) && flat.includes(`perDay is from 1 to ${n(WARMUP_MAXIMA.perDay)}`))
})

test('docs/egress.md keeps the sections others fill and the recovery rule the state module implements', () => {
  for (const heading of ['## Sources and pools', '## What operators can see']) assert.ok(doc.includes(`\n${heading}\n`), heading)
  assert.ok(flat.includes('Slowed lanes recover gradually: the rate doubles back every 10 minutes without a matching reply; ' +
    'pauses and outs end at their time.'))
})
