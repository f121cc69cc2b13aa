import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  QUEUE_KEYS, normalizeSelector, parseWakeHeader, selectorMatches, wakeHeaderValue
} from '../../../protocol/mod.ts'

test('selectors: domains and providers lower-cased, a trailing dot dropped; each kind checks its value', () => {
  assert.deepEqual(normalizeSelector({ by: 'domain', value: ' Mail.Example.COM. ' }).selector, { by: 'domain', value: 'mail.example.com' })
  assert.deepEqual(normalizeSelector({ by: 'provider', value: 'Google' }).selector, { by: 'provider', value: 'google' })
  assert.deepEqual(normalizeSelector({ by: 'provider', value: 'site:mx1.example.net,mx2.example.net' }).selector,
    { by: 'provider', value: 'site:mx1.example.net,mx2.example.net' })
  const org = 'org_0123456789abcdefghijklmnop'
  assert.deepEqual(normalizeSelector({ by: 'organization', value: org }).selector, { by: 'organization', value: org })
  for (const bad of [
    { by: 'domain', value: 'not a domain' }, { by: 'domain', value: '' }, { by: 'provider', value: 'default' },
    { by: 'provider', value: 'has space' }, { by: 'organization', value: 'example.com' }, { by: 'planet', value: 'x' }, { by: 'domain' }
  ]) {
    const r = normalizeSelector(bad)
    assert.equal(r.selector, undefined, JSON.stringify(bad))
    assert.equal(r.errors.length, 1)
  }
})

test('matching: domain and organisation always known, a provider only once an attempt found it', () => {
  const r = { domain: 'a.example', org: 'org_x' }
  assert.equal(selectorMatches({ by: 'domain', value: 'a.example' }, r), true)
  assert.equal(selectorMatches({ by: 'domain', value: 'b.example' }, r), false)
  assert.equal(selectorMatches({ by: 'organization', value: 'org_x' }, r), true)
  assert.equal(selectorMatches({ by: 'provider', value: 'google' }, r), false)
  assert.equal(selectorMatches({ by: 'provider', value: 'google' }, { ...r, provider: 'google' }), true)
})

test('wake header and keys: round trip; keys fit the KV alphabet whatever the value', () => {
  const s = { by: 'provider' as const, value: 'site:mx1.example.net,mx2.example.net' }
  assert.deepEqual(parseWakeHeader(wakeHeaderValue('retry', s)), { action: 'retry', selector: s })
  assert.equal(parseWakeHeader(''), undefined)
  assert.equal(parseWakeHeader('drop;domain=x'), undefined)
  assert.match(QUEUE_KEYS.hold(s), /^queue\.hold\.[0-9a-f]{40}$/)
  assert.notEqual(QUEUE_KEYS.hold(s), QUEUE_KEYS.hold({ by: 'domain', value: s.value }))
})
