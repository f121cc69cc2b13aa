import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  DEFAULT_POOL, egressPoolOf, isEgressName, isEhloName, isSourceAddress, limitsErrors, parseLimitAssignments, poolMembersErrors,
  sourceInputErrors, warmupErrors
} from '../../../protocol/mod.ts'

const fields = (errors: Array<{ field: string }>): string[] => errors.map((e) => e.field)

test('the pool of a domain: its own, else its organisation\'s, else default', () => {
  assert.equal(egressPoolOf({}, {}), DEFAULT_POOL)
  assert.equal(egressPoolOf({ egress_pool: 'bulk' }, {}), 'bulk')
  assert.equal(egressPoolOf({ egress_pool: 'bulk' }, { egress_pool: 'vip' }), 'vip')
  assert.equal(egressPoolOf({ egress_pool: 'bulk' }, { egress_pool: 'default' }), 'default')
  assert.equal(egressPoolOf({}, { egress_pool: 'vip' }), 'vip')
})

test('the pool of mail on a stream: the stream\'s own, else its domain\'s, else its organisation\'s, else default', () => {
  assert.equal(egressPoolOf({}, {}, {}), DEFAULT_POOL)
  assert.equal(egressPoolOf({}, {}, { egress_pool: 'news' }), 'news')
  assert.equal(egressPoolOf({ egress_pool: 'bulk' }, {}, { egress_pool: 'news' }), 'news')
  assert.equal(egressPoolOf({ egress_pool: 'bulk' }, { egress_pool: 'vip' }, { egress_pool: 'news' }), 'news')
  assert.equal(egressPoolOf({ egress_pool: 'bulk' }, { egress_pool: 'vip' }, { egress_pool: 'default' }), 'default')
  // transactional (never stored) and a stream deleted since its mail was queued have no record: the domain's applies
  assert.equal(egressPoolOf({ egress_pool: 'bulk' }, { egress_pool: 'vip' }, {}), 'vip')
  assert.equal(egressPoolOf({ egress_pool: 'bulk' }, {}, {}), 'bulk')
})

test('names are lower-case letters, digits and inner hyphens, 1 to 32, so they are safe as KV keys', () => {
  for (const ok of ['a', 'default', 'mta-1', '0', 'a'.repeat(32)]) assert.ok(isEgressName(ok), ok)
  for (const bad of ['', '-a', 'A', 'a.b', 'a_b', 'a b', 'a'.repeat(33), '../x', 'a>', 'a*', 'é']) assert.ok(!isEgressName(bad), bad)
})

test('addresses are IPv4 or IPv6 literals without a zone; EHLO names are host names of two labels or more', () => {
  for (const ok of ['192.0.2.10', '2001:db8::10', '::1', '::ffff:192.0.2.1']) assert.ok(isSourceAddress(ok), ok)
  for (const bad of ['', '192.0.2', '192.0.2.256', 'mta.example.com', 'fe80::1%eth0', ' 192.0.2.1', '192.0.2.1/32']) {
    assert.ok(!isSourceAddress(bad), bad)
  }
  for (const ok of ['mta1.example.com', 'a.b', 'x-1.example.co.uk']) assert.ok(isEhloName(ok), ok)
  for (const bad of ['', 'localhost', 'MTA.example.com', '-a.example.com', 'a-.example.com', 'a..b', '192.0.2.1', 'a_b.example.com',
    `${'a'.repeat(64)}.com`]) {
    assert.ok(!isEhloName(bad), bad)
  }
})

test('a new source needs a name, an address and an EHLO name; a change needs one field at least', () => {
  assert.deepEqual(sourceInputErrors({ name: 'mta1', address: '192.0.2.10', ehlo: 'mta1.example.com' }, false), [])
  assert.deepEqual(sourceInputErrors({ name: 'mta1', address: '192.0.2.10', ehlo: 'mta1.example.com', warmup: {} }, false), [])
  assert.deepEqual(fields(sourceInputErrors({ name: 'MTA', address: '1.2.3', ehlo: 'x', extra: 1 }, false)),
    ['extra', 'name', 'address', 'ehlo'])
  assert.deepEqual(fields(sourceInputErrors({}, false)), ['name', 'address', 'ehlo'])
  assert.deepEqual(fields(sourceInputErrors({}, true)), ['body'])
  assert.deepEqual(sourceInputErrors({ warmup: null }, true), [])
  assert.deepEqual(fields(sourceInputErrors({ address: 'nope' }, true)), ['address'])
  assert.deepEqual(fields(sourceInputErrors({ name: 'x', address: '::1', ehlo: 'a.b' }, true)), ['name'])
})

test('warm-up steps: days increasing from 1 (the first day) to 365, per hour at most per day', () => {
  const steps = [{ day: 1, perDay: 50, perHour: 10 }, { day: 3, perDay: 200, perHour: 40 }]
  assert.deepEqual(warmupErrors({ started_at: '2026-11-28T10:00:00Z', steps }), [])
  assert.deepEqual(fields(warmupErrors({ started_at: 'yesterday' })), ['warmup.started_at'])
  assert.deepEqual(fields(warmupErrors({ steps: [] })), ['warmup.steps'])
  assert.deepEqual(fields(warmupErrors({ steps: [{ day: 1, perDay: 5, perHour: 9 }, { day: 1, perDay: 0, perHour: 1 }] })),
    ['warmup.steps[0].perHour', 'warmup.steps[1].day', 'warmup.steps[1].perDay'])
  assert.deepEqual(fields(warmupErrors({ steps: [{ day: 0, perDay: 5, perHour: 1 }] })), ['warmup.steps[0].day'])
  assert.deepEqual(fields(warmupErrors({ steps: [{ day: 2, perDay: 5, perHour: 1 }] })), ['warmup.steps[0].day'])
  assert.deepEqual(fields(warmupErrors([])), ['warmup'])
})

test('pool members: known names, each once, weights 1 to 100; only default may be empty', () => {
  assert.deepEqual(poolMembersErrors('bulk', [{ source: 'a' }, { source: 'b', weight: 100 }, { source: 'c', weight: 1 }]), [])
  assert.deepEqual(poolMembersErrors(DEFAULT_POOL, []), [])
  assert.deepEqual(fields(poolMembersErrors('bulk', [])), ['sources'])
  assert.deepEqual(fields(poolMembersErrors('bulk', [{ source: 'a', weight: 0 }, { source: 'a' }, { source: 'B', weight: 101 }, 'c'])),
    ['sources[0].weight', 'sources[1].source', 'sources[2].source', 'sources[2].weight', 'sources[3]'])
  assert.deepEqual(fields(poolMembersErrors('bulk', Array.from({ length: 65 }, (_, i) => ({ source: `s${i}` })))), ['sources'])
  assert.deepEqual(fields(poolMembersErrors('bulk', [{ source: 'a', weight: 2.5 }])), ['sources[0].weight'])
})

test('limit overrides: integers within bounds, tls opportunistic or required, provider keys of one shape', () => {
  assert.deepEqual(limitsErrors({}), [])
  assert.deepEqual(limitsErrors({
    default: { maxConnections: 10 },
    google: { maxConnections: 1000, messagesPerConnection: 10_000, messagesPerMinute: 1_000_000, tls: 'required' },
    'site:mx1.example.net,mx2.example.net': { tls: 'opportunistic' }
  }), [])
  assert.deepEqual(fields(limitsErrors({
    google: { maxConnections: 0, messagesPerConnection: 10_001, messagesPerMinute: 1.5, tls: 'always', burst: 3 },
    'Bad Key': {},
    yahoo: 5
  })), [
    'limits.google.burst', 'limits.google.maxConnections', 'limits.google.messagesPerConnection', 'limits.google.messagesPerMinute',
    'limits.google.tls', 'limits.Bad Key', 'limits.yahoo'
  ])
  assert.deepEqual(fields(limitsErrors([])), ['limits'])
})

test('the CLI\'s key=value words go through the same checks; an empty value removes the key', () => {
  assert.deepEqual(parseLimitAssignments(['maxConnections=5', 'tls=required', 'messagesPerMinute=']), {
    set: { maxConnections: 5, tls: 'required' }, unset: ['messagesPerMinute'], errors: []
  })
  assert.deepEqual(fields(parseLimitAssignments(['maxConnections=x', 'tls=never', 'burst=3', 'maxConnections']).errors),
    ['burst', 'maxConnections', 'maxConnections', 'tls'])
})
