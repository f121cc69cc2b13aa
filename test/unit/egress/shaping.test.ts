import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DEFAULT_LIMITS, LIMIT_MAXIMA, PROVIDERS, limitsFor } from '../../../protocol/egress/mod.ts'
import { limitsErrors } from '../../../protocol/egress/mod.ts'

test('shaping: every provider has its defaults, every default is within the accepted maxima', () => {
  for (const p of PROVIDERS) assert.ok(DEFAULT_LIMITS[p.id] !== undefined, p.id)
  assert.deepEqual(Object.keys(DEFAULT_LIMITS).sort(), ['default', ...PROVIDERS.map((p) => p.id)].sort())
  for (const [id, limits] of Object.entries(DEFAULT_LIMITS)) {
    assert.deepEqual(limitsErrors({ [id]: limits }), [], id)
    assert.ok(Object.isFrozen(limits), `${id} is frozen`)
  }
  assert.deepEqual(DEFAULT_LIMITS.default,
    { maxConnections: 10, messagesPerConnection: 100, messagesPerMinute: 6000, tls: 'opportunistic' })
  assert.deepEqual(DEFAULT_LIMITS.google, { maxConnections: 5, messagesPerConnection: 50, messagesPerMinute: 6000, tls: 'required' })
})

test('shaping: a provider gets its own defaults, and its own override over them; the default override is for sites', () => {
  assert.deepEqual(limitsFor('google'), DEFAULT_LIMITS.google)
  const overrides = {
    default: { maxConnections: 3, tls: 'required' as const },
    google: { messagesPerMinute: 600 },
    'site:mx1.example.net': { messagesPerConnection: 7 }
  }
  assert.deepEqual(limitsFor('google', overrides), { ...DEFAULT_LIMITS.google, messagesPerMinute: 600 })
  assert.deepEqual(limitsFor('yahoo', overrides), DEFAULT_LIMITS.yahoo, 'overrides.default does not reach a provider')
  assert.deepEqual(limitsFor('site:mx.example.org', overrides), { ...DEFAULT_LIMITS.default, maxConnections: 3, tls: 'required' })
  assert.deepEqual(limitsFor('site:mx1.example.net', overrides),
    { ...DEFAULT_LIMITS.default, maxConnections: 3, tls: 'required', messagesPerConnection: 7 }, 'a site\'s own override wins')
  assert.deepEqual(limitsFor('site:mx.example.org'), DEFAULT_LIMITS.default)
  assert.deepEqual(limitsFor('no-such-provider'), DEFAULT_LIMITS.default, 'an unknown id is treated as a site')
})

test('shaping: a source\'s own overrides go over the installation\'s, by the same rule', () => {
  const installation = { google: { maxConnections: 4, messagesPerMinute: 600 }, default: { maxConnections: 3 } }
  const source = { google: { maxConnections: 1 }, default: { tls: 'required' as const }, 'site:mx.example.org': { maxConnections: 2 } }
  assert.deepEqual(limitsFor('google', installation, source), { ...DEFAULT_LIMITS.google, maxConnections: 1, messagesPerMinute: 600 })
  assert.deepEqual(limitsFor('google', installation, {}), { ...DEFAULT_LIMITS.google, maxConnections: 4, messagesPerMinute: 600 })
  assert.deepEqual(limitsFor('yahoo', installation, source), DEFAULT_LIMITS.yahoo, 'the source\'s default entry is for sites')
  assert.deepEqual(limitsFor('site:mx.example.org', installation, source),
    { ...DEFAULT_LIMITS.default, maxConnections: 2, tls: 'required' }, 'a site: the source\'s default, then its entry for the site')
  assert.deepEqual(limitsFor('site:other.example', installation, source), { ...DEFAULT_LIMITS.default, maxConnections: 3, tls: 'required' })
})

test('shaping: an override field left undefined keeps the value below it; the result is a fresh object', () => {
  const limits = limitsFor('microsoft', { microsoft: { maxConnections: undefined, messagesPerConnection: 20 } })
  assert.deepEqual(limits, { ...DEFAULT_LIMITS.microsoft, messagesPerConnection: 20 })
  limits.maxConnections = 999
  assert.equal(limitsFor('microsoft').maxConnections, DEFAULT_LIMITS.microsoft.maxConnections)
  assert.equal(limitsFor('google', { ['__proto__']: { maxConnections: 1 } }).maxConnections, 5)
})

test('shaping: overrides are checked by the one writer of them (records.ts), keyed by known providers only', () => {
  assert.deepEqual(limitsErrors({}), [])
  assert.deepEqual(limitsErrors({ default: {}, google: { maxConnections: 1000, tls: 'opportunistic' } }), [])
  assert.deepEqual(limitsErrors({ 'site:mx1.example.net,mx2.example.net': { messagesPerMinute: 1_000_000 } }), [])
  const bad: unknown[] = [
    null, [], 'google', { gmail: {} }, { 'site:': {} }, { 'site:MX.EXAMPLE.NET': {} }, { google: 5 },
    { google: { maxConnections: 0 } }, { google: { maxConnections: 1001 } }, { google: { maxConnections: 2.5 } },
    { google: { maxConnections: '5' } }, { default: { messagesPerConnection: LIMIT_MAXIMA.messagesPerConnection + 1 } },
    { default: { messagesPerMinute: 1_000_001 } }, { default: { tls: 'always' } }, { default: { connections: 3 } }
  ]
  for (const input of bad) assert.ok(limitsErrors(input).length > 0, JSON.stringify(input))
})
