import { test } from 'node:test'
import assert from 'node:assert/strict'
import { loadConfig, ConfigError } from '../../config/mod.ts'
import { RELAY_SPF_WARNING, spfMechanisms, spfPolicy, type EgressAddresses } from '../../gateway/control/spf.ts'
import { servesCertificateFor, trackingHostOf } from '../../gateway/http/tracking_host.ts'
import {
  DEFAULT_POOL, domainHostErrors, domainOfHost, queuedHosts, trackingBaseUrl,
  type DomainRecord, type EgressPoolRecord, type EgressSourceRecord
} from '../../protocol/mod.ts'

const AT = '2026-11-28T00:00:00.000Z'
const source = (name: string, address: string): EgressSourceRecord =>
  ({ name, address, ehlo: `${name}.outbox.test`, created_at: AT, updated_at: AT })
const pool = (name: string, sources: string[]): EgressPoolRecord => ({
  name, sources: sources.map((s) => ({ source: s, weight: 100 })), created_at: AT, updated_at: AT
})
function egress (sources: EgressSourceRecord[], pools: EgressPoolRecord[]): EgressAddresses {
  return {
    sources: () => sources,
    pool: (name) => pools.find((p) => p.name === name) ?? (name === DEFAULT_POOL ? pool(DEFAULT_POOL, []) : undefined)
  }
}

test('OB_SPF is sources by default, or include: and a host name; anything else stops the start naming the variable', () => {
  assert.deepEqual(loadConfig({}).spf, { kind: 'sources' })
  assert.deepEqual(loadConfig({ OB_SPF: 'include:SPF.Outbox.example.com.' }).spf,
    { kind: 'include', domain: 'spf.outbox.example.com' })
  for (const bad of ['include:', 'include:192.0.2.1', 'ip4:192.0.2.1', 'a:mx.example.com', 'include:localhost', 'everything']) {
    assert.throws(() => loadConfig({ OB_SPF: bad }), (e: unknown) => e instanceof ConfigError && e.message.includes('OB_SPF'), bad)
  }
})

test('sources: every source\'s address, sorted, with the public host while the default pool has no sources', () => {
  const config = loadConfig({ OB_PUBLIC_URL: 'https://api.outbox.example.com' })
  assert.deepEqual(spfPolicy(config, egress([], [])), { value: 'v=spf1 a:api.outbox.example.com ~all' })
  assert.deepEqual(spfPolicy(loadConfig({}), egress([], [])), { value: 'v=spf1 ip4:127.0.0.1 ~all' })
  const sources = [source('b', '192.0.2.20'), source('a', '2001:db8::25'), source('c', '192.0.2.10'), source('d', '192.0.2.10')]
  assert.equal(spfPolicy(config, egress(sources, [pool('bulk', ['b'])])).value,
    'v=spf1 ip4:192.0.2.10 ip4:192.0.2.20 ip6:2001:db8::25 a:api.outbox.example.com ~all')
  assert.equal(spfPolicy(config, egress(sources, [pool('default', ['c'])])).value,
    'v=spf1 ip4:192.0.2.10 ip4:192.0.2.20 ip6:2001:db8::25 ~all')
})

test('include: names that record only; sources with a relay warn that the relay is not named', () => {
  const include = loadConfig({ OB_SPF: 'include:amazonses.com', OB_SMTP_RELAY: 'smtp://email-smtp.example:587' })
  assert.deepEqual(spfPolicy(include, egress([source('a', '192.0.2.10')], [])), { value: 'v=spf1 include:amazonses.com ~all' })
  const relay = loadConfig({ OB_SMTP_RELAY: 'smtp://email-smtp.example:587' })
  assert.equal(spfPolicy(relay, egress([], [])).warning, RELAY_SPF_WARNING)
  assert.deepEqual(spfMechanisms('v=spf1 include:a.example ip4:192.0.2.1 -all'), ['include:a.example', 'ip4:192.0.2.1'])
})

test('a chosen host must be under the domain, not bounces.<domain>, not the other host', () => {
  const ok = (kind: 'tracking' | 'return_path', host: string, other?: string): string[] =>
    domainHostErrors('mail.example.com', kind, host, other).map((e) => e.message)
  assert.deepEqual(ok('tracking', 'links.mail.example.com'), [])
  assert.deepEqual(ok('tracking', 'links.example.com'), ['must be a subdomain of mail.example.com'])
  assert.deepEqual(ok('tracking', 'links.evilmail.example.com'), ['must be a subdomain of mail.example.com'])
  assert.deepEqual(ok('tracking', 'mail.example.com'), ['must be a subdomain of mail.example.com'])
  assert.deepEqual(ok('return_path', 'bounces.mail.example.com'), ['must not be bounces.mail.example.com, the default return path'])
  assert.equal(ok('tracking', 'rp.mail.example.com', 'rp.mail.example.com').length, 1)
  for (const bad of ['links.mail.example.com\r\nX: y', 'Links.mail.example.com', 'a..mail.example.com', '*.mail.example.com', '']) {
    assert.deepEqual(ok('tracking', bad), ['must be a host name such as links.example.com'], JSON.stringify(bad))
  }
})

function domain (over: Partial<DomainRecord>): DomainRecord {
  return {
    id: 'dom_1', org_id: 'org_a', name: 'mail.example.com', status: 'verified', dkim_selector: 's', dkim_private_key: '',
    dkim_public_key: '', records: [], created_at: AT, ...over
  }
}

test('only a verified host of a verified domain is queued and served, found through the names above it', () => {
  const verified = domain({ tracking: { host: 'links.mail.example.com', verified_at: AT }, return_path: { host: 'rp.mail.example.com' } })
  assert.deepEqual(queuedHosts(verified), { tracking_host: 'links.mail.example.com' })
  assert.deepEqual(queuedHosts({ ...verified, status: 'pending' }), {})
  const owners = { domainOwner: (name: string) => name === 'mail.example.com' ? verified : undefined }
  assert.equal(domainOfHost(owners.domainOwner, 'links.mail.example.com', 'tracking'), verified)
  assert.equal(domainOfHost(owners.domainOwner, 'rp.mail.example.com', 'return_path'), undefined, 'not verified yet')
  const url = 'https://api.outbox.example.com'
  assert.equal(trackingHostOf(owners, url, 'links.mail.example.com:443'), verified)
  assert.equal(trackingHostOf(owners, url, 'LINKS.mail.example.com.'), verified)
  for (const h of ['api.outbox.example.com', '127.0.0.1:8080', '[::1]:8080', 'localhost', '']) {
    assert.equal(trackingHostOf(owners, url, h), 'public', h)
  }
  for (const h of ['other.mail.example.com', 'links.mail.example.com.evil.test', 'x y', '[::1', 'mail.example.com']) {
    assert.equal(trackingHostOf(owners, url, h), undefined, h)
  }
  assert.equal(servesCertificateFor(owners, url, 'links.mail.example.com'), true)
  assert.equal(servesCertificateFor(owners, url, 'api.outbox.example.com'), true)
  for (const h of ['127.0.0.1', 'localhost', '', 'other.mail.example.com']) assert.equal(servesCertificateFor(owners, url, h), false, h)
})

test('links keep the scheme, port and path of the public URL, with the tracking host', () => {
  assert.equal(trackingBaseUrl('https://api.outbox.example.com', undefined), 'https://api.outbox.example.com')
  assert.equal(trackingBaseUrl('https://api.outbox.example.com', 'links.mail.example.com'), 'https://links.mail.example.com')
  assert.equal(trackingBaseUrl('https://api.outbox.example.com:8443/outbox', 'links.mail.example.com'),
    'https://links.mail.example.com:8443/outbox')
})
