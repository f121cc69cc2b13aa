import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { DiscardPolicy } from '@nats-io/jetstream'
import {
  EVENTS_MAX_AGE_MS, STORE_SHARES_PER_MILLE, KV_SHARD_LEASES, OBJ_INBOUND_RAW, inboundRawStoreOptions, kvBucketOptions,
  objectStoreShareBytes, storeShareBytes, streamTable, CONSUMER_INBOUND, CONSUMER_PROJECTOR, CONSUMER_WEBHOOK_FANOUT, JETSTREAM_BUCKETS,
  NS_PER_MS, STREAM_AUDIT, STREAM_EVENTS, STREAM_INBOUND, STREAM_MESSAGE_CONTENT, STREAM_OUTBOUND, STREAM_WEBHOOK_JOBS, eventSubject,
  messageContentSubject, auditSubject, inboundSubject, jetStreamTable, outboundConsumer, outboundSubject, tablePart, webhookJobConsumer,
  webhookJobSubject, type JetStreamPart, type JetStreamTable
} from '../../protocol/mod.ts'
import { loadConfig, MAX_MESSAGE_CONTENT_RETENTION_DAYS } from '../../config/mod.ts'
import { READ_MODEL_RETENTION_MS } from '../../stores/read_model/message_store_keys.ts'

const SHARDS = 4
const STORE_BYTES = 10 * 1024 ** 3
const DAY_MS = 24 * 3600_000
const table = jetStreamTable({
  replicas: 3, messageContentRetentionDays: 7, storeBytes: STORE_BYTES, shards: SHARDS, ackWaitMs: 45_000, webhookTimeoutMs: 10_000
})
const streamOf = (name: string) => table.streams.find((s) => s.config.name === name)

/** Whether every subject `filter` matches is also matched by `pattern` (NATS wildcards `*` and `>`). */
function subjectWithin (filter: string, pattern: string): boolean {
  const f = filter.split('.')
  const p = pattern.split('.')
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return f.length > i
    if (i >= f.length || f[i] === '>') return false
    if (p[i] !== '*' && p[i] !== f[i]) return false
  }
  return f.length === p.length
}

test('subjectWithin follows NATS wildcard rules', () => {
  assert.ok(subjectWithin('ob.out.3', 'ob.out.>'))
  assert.ok(subjectWithin('ob.whjob.2.>', 'ob.whjob.>'))
  assert.ok(subjectWithin('ob.evt.>', 'ob.evt.>'))
  assert.ok(!subjectWithin('ob.out', 'ob.out.>'))
  assert.ok(!subjectWithin('ob.evt.>', 'ob.evt.*'))
  assert.ok(!subjectWithin('ob.in.1', 'ob.out.>'))
})

test('the table has every stream and every consumer, each once', () => {
  const streams = table.streams.map((s) => s.config.name)
  assert.deepEqual([...streams].sort(),
    [STREAM_AUDIT, STREAM_EVENTS, STREAM_INBOUND, STREAM_MESSAGE_CONTENT, STREAM_OUTBOUND, STREAM_WEBHOOK_JOBS].sort())
  const consumers = table.consumers.map((c) => `${c.stream}/${c.config.durable_name}`)
  const shards = Array.from({ length: SHARDS }, (_v, i) => i)
  assert.deepEqual([...consumers].sort(), [
    ...shards.map((n) => `${STREAM_OUTBOUND}/${outboundConsumer(n)}`),
    `${STREAM_EVENTS}/${CONSUMER_PROJECTOR}`,
    `${STREAM_EVENTS}/${CONSUMER_WEBHOOK_FANOUT}`,
    ...shards.map((n) => `${STREAM_WEBHOOK_JOBS}/${webhookJobConsumer(n)}`),
    `${STREAM_INBOUND}/${CONSUMER_INBOUND}`
  ].sort())
})

test('every consumer reads a stream of the table, and its filter lies inside that stream\'s subjects', () => {
  for (const c of table.consumers) {
    const stream = streamOf(c.stream)
    assert.ok(stream !== undefined, `${c.config.durable_name}: no stream ${c.stream}`)
    const filter = c.config.filter_subject
    if (filter !== undefined) {
      assert.ok(stream.config.subjects.some((s) => subjectWithin(filter, s)),
        `${c.config.durable_name}: ${filter} outside ${stream.config.subjects.join(', ')}`)
    }
  }
})

test('what is published lands in the stream whose consumers read it', () => {
  const within = (subject: string, stream: string): boolean => streamOf(stream)!.config.subjects.some((s) => subjectWithin(subject, s))
  assert.ok(within(outboundSubject(SHARDS - 1), STREAM_OUTBOUND))
  assert.ok(within(eventSubject('org_1', 'delivered'), STREAM_EVENTS))
  assert.ok(within(webhookJobSubject(1, 'wh_1'), STREAM_WEBHOOK_JOBS))
  assert.ok(within(inboundSubject(2), STREAM_INBOUND))
  assert.ok(within(messageContentSubject('msg_1'), STREAM_MESSAGE_CONTENT))
  assert.ok(within(messageContentSubject('msg_1', 3), STREAM_MESSAGE_CONTENT))
  assert.ok(within(auditSubject('org_1'), STREAM_AUDIT))
  const filterOf = (name: string): string => table.consumers.find((c) => c.config.durable_name === name)!.config.filter_subject!
  assert.ok(subjectWithin(outboundSubject(2), filterOf(outboundConsumer(2))))
  assert.ok(!subjectWithin(outboundSubject(1), filterOf(outboundConsumer(2))))
  assert.ok(subjectWithin(webhookJobSubject(3, 'wh_1'), filterOf(webhookJobConsumer(3))))
})

test('settings follow the configuration they depend on', () => {
  for (const s of table.streams) assert.equal(s.config.num_replicas, 3)
  assert.equal(streamOf(STREAM_MESSAGE_CONTENT)!.config.max_age, 7 * DAY_MS * NS_PER_MS)
  assert.equal(streamOf(STREAM_AUDIT)!.config.max_age, 365 * DAY_MS * NS_PER_MS, 'the audit log by default')
  const audit = streamTable({ replicas: 1, messageContentRetentionDays: 1, storeBytes: STORE_BYTES, auditRetentionDays: 90 })
  assert.equal(audit.find((s) => s.config.name === STREAM_AUDIT)!.config.max_age, 90 * DAY_MS * NS_PER_MS)
  assert.equal(table.consumers.find((c) => c.config.durable_name === outboundConsumer(0))!.config.ack_wait, 45_000 * NS_PER_MS)
  // Webhook consumers wait the request timeout plus 30 s of slack.
  for (const name of [CONSUMER_WEBHOOK_FANOUT, webhookJobConsumer(0)]) {
    assert.equal(table.consumers.find((c) => c.config.durable_name === name)!.config.ack_wait, 40_000 * NS_PER_MS)
  }
})

test('message content is kept as long as the message at most, and with recording off two minutes, never forever', () => {
  const contentMaxAge = (days: number): number => streamTable({ replicas: 1, messageContentRetentionDays: days, storeBytes: STORE_BYTES })
    .find((s) => s.config.name === STREAM_MESSAGE_CONTENT)!.config.max_age!
  assert.equal(contentMaxAge(loadConfig({}).messageContent.retentionDays), EVENTS_MAX_AGE_MS * NS_PER_MS)
  assert.equal(contentMaxAge(MAX_MESSAGE_CONTENT_RETENTION_DAYS) / NS_PER_MS, READ_MODEL_RETENTION_MS,
    'content outliving its message could never be read')
  assert.equal(contentMaxAge(1), DAY_MS * NS_PER_MS)
  assert.equal(contentMaxAge(0), 2 * 60_000 * NS_PER_MS)
  // nats-server refuses a duplicate window longer than max_age, and reads a max_age of 0 as no limit
  for (let days = 0; days <= MAX_MESSAGE_CONTENT_RETENTION_DAYS; days++) {
    for (const { config: c } of streamTable({ replicas: 1, messageContentRetentionDays: days, storeBytes: STORE_BYTES })) {
      if (c.max_age === undefined) continue
      assert.ok(c.max_age > 0, `${c.name} at ${days} days: max_age 0 keeps everything`)
      assert.ok((c.duplicate_window ?? 0) <= c.max_age, `${c.name} at ${days} days: duplicate window over max_age`)
    }
  }
})

test('a part ensured after the core streams finds the stream of each of its consumers', () => {
  const parts: JetStreamPart[] = ['core', 'delivery', 'projector', 'webhooks', 'inbound']
  for (const part of parts) {
    const ensured = tablePart(table, 'core', part)
    for (const c of ensured.consumers) {
      assert.ok(ensured.streams.some((s) => s.config.name === c.stream), `${part}: ${c.config.durable_name} without ${c.stream}`)
    }
  }
})

/** Who creates an entry at start, as the operations guide says it. */
const CREATED_BY: Record<JetStreamPart, string> = {
  core: 'every process',
  delivery: 'engine',
  projector: 'engine',
  webhooks: 'engine',
  inbound: 'inbound'
}

/** The rows docs/operations.md shows for a table (per-shard entries as one row with `<n>`). */
function docRows (t: JetStreamTable): string[] {
  const shard = (s: string): string => s.split('.').map((token) => token === '0' ? '<n>' : token).join('.').replace(/_0$/, '_<n>')
  const days = (ns: number): string => `${ns / NS_PER_MS / (24 * 3600_000)} days`
  return [
    ...t.streams.map(({ config: s, part, purpose }) =>
      `| \`${s.name}\` | \`${s.subjects.join(', ')}\` | ` +
      `${s.retention === 'workqueue' ? 'work queue' : 'limits'}${s.max_age !== undefined ? `, ${days(s.max_age)}` : ''} | ` +
      `${CREATED_BY[part]} | ${purpose} |`),
    ...t.consumers.map(({ config: c, stream, part, purpose }) =>
      `| \`${shard(c.durable_name)}\` | \`${stream}\` | ${c.filter_subject !== undefined ? `\`${shard(c.filter_subject)}\`` : 'all'} | ` +
      `${CREATED_BY[part]} | ${purpose} |`)
  ]
}

test('docs/operations.md lists exactly the streams, consumers and buckets of the table', () => {
  const doc = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8')
  const section = doc.split('\n### Streams and consumers\n')[1]?.split('\n#')[0]
  assert.ok(section !== undefined, 'docs/operations.md has no "Streams and consumers" section')
  const rows = section.split('\n').filter((l) => l.startsWith('| `'))
  const expected = docRows(jetStreamTable({
    replicas: 1, messageContentRetentionDays: MAX_MESSAGE_CONTENT_RETENTION_DAYS, storeBytes: STORE_BYTES, shards: 1, ackWaitMs: 60_000,
    webhookTimeoutMs: 10_000
  }))
  assert.deepEqual(rows, expected, `expected rows:\n${expected.join('\n')}`)
  for (const b of JETSTREAM_BUCKETS) assert.ok(section.includes(`\`${b.name}\``), `bucket ${b.name} not listed`)
})

test('every stream and bucket has a share of the store, the shares sum below the whole, and owed work is never discarded', () => {
  const streams = table.streams.map((s) => s.config.name)
  const buckets = JETSTREAM_BUCKETS.map((b) => `${b.kind === 'kv' ? 'KV' : 'OBJ'}_${b.name}`)
  assert.deepEqual(Object.keys(STORE_SHARES_PER_MILLE).sort(), [...streams, ...buckets].sort())
  const total = Object.keys(STORE_SHARES_PER_MILLE).reduce((sum, name) => sum + storeShareBytes(STORE_BYTES, name), 0)
  // nats-server refuses every write once the store is full: the entries' limits must keep it from filling
  assert.ok(total < STORE_BYTES * 0.96, `${total} of ${STORE_BYTES}`)
  for (const s of table.streams) assert.equal(s.config.max_bytes, storeShareBytes(STORE_BYTES, s.config.name), s.config.name)
  const history = [STREAM_EVENTS, STREAM_MESSAGE_CONTENT, STREAM_AUDIT]
  for (const s of table.streams) {
    assert.equal(s.config.discard, history.includes(s.config.name) ? DiscardPolicy.Old : DiscardPolicy.New,
      `${s.config.name} discard policy`)
  }
  assert.equal(inboundRawStoreOptions(1, STORE_BYTES).max_bytes, objectStoreShareBytes(STORE_BYTES, OBJ_INBOUND_RAW))
  assert.equal(kvBucketOptions(1, STORE_BYTES, KV_SHARD_LEASES).max_bytes, storeShareBytes(STORE_BYTES, `KV_${KV_SHARD_LEASES}`))
})

test('docs/operations.md states each entry\'s share of the store', () => {
  const doc = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8')
  const section = doc.split('\n### JetStream store size\n')[1]?.split('\n#')[0]
  assert.ok(section !== undefined, 'docs/operations.md has no "JetStream store size" section')
  const stated = new Map<string, string>()
  for (const line of section.split('\n').filter((l) => l.startsWith('| `'))) {
    const [names, share] = line.split(' | ')
    for (const name of names!.slice(2).split(', ')) stated.set(name.replace(/`/g, ''), share!.replace(/ each$/, ''))
  }
  for (const [name, perMille] of Object.entries(STORE_SHARES_PER_MILLE)) assert.equal(stated.get(name), `${perMille / 10}%`, name)
  assert.deepEqual([...stated.keys()].sort(), Object.keys(STORE_SHARES_PER_MILLE).sort())
  const sum = Object.values(STORE_SHARES_PER_MILLE).reduce((a, b) => a + b, 0)
  assert.ok(section.includes(`add up to ${sum / 10}%`), `the section says the shares add up to ${sum / 10}%`)
})
