import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { DnsServer } from '../../helpers/dns_server.ts'
import { testCa } from '../../helpers/https_receiver.ts'
import { MtaStsServer, stsPolicy } from '../../helpers/mta_sts_server.ts'
import { StsPolicies, RECHECK_MS } from '../../../engine/tls/sts_policies.ts'
import { trustedCas } from '../../../engine/tls/outbound_tls.ts'
import { readFileSync } from 'node:fs'

/**
 * How a thread finds and keeps MTA-STS policies (docs/delivery.md, "MTA-STS"), against a real DNS server and a real
 * HTTPS policy server, the clock moved by the test.
 */
let dns: DnsServer
let server: MtaStsServer
let clock = Date.now()
const DOMAINS = ['cache.test', 'redirect.test', 'big.test', 'html.test', 'private.test']

before(async () => {
  server = await MtaStsServer.start({
    'cache.test': stsPolicy('enforce', ['mx.cache.test'], 3600),
    'redirect.test': { status: 301, headers: { location: 'https://mta-sts.cache.test/.well-known/mta-sts.txt' } },
    'big.test': {
      status: 200, headers: { 'content-type': 'text/plain' }, body: stsPolicy('enforce', ['mx.big.test']) + '#'.repeat(70_000)
    },
    'html.test': { status: 200, headers: { 'content-type': 'text/html' }, body: stsPolicy('enforce', ['mx.html.test']) },
    'private.test': stsPolicy('enforce', ['mx.private.test'])
  })
  dns = await DnsServer.start({
    A: Object.fromEntries(DOMAINS.map((d) => [`mta-sts.${d}`, ['127.0.0.1']])),
    TXT: Object.fromEntries(DOMAINS.map((d) => [`_mta-sts.${d}`, ['v=STSv1; id=1']]))
  })
})
after(async () => {
  await server.close()
  await dns.close()
})

function policies (opts: { allowPrivate?: boolean, ca?: boolean } = {}): StsPolicies {
  return new StsPolicies({
    dnsServers: [dns.address],
    allowPrivate: opts.allowPrivate ?? true,
    ca: opts.ca === false ? undefined : trustedCas(readFileSync(testCa().caFile, 'utf8')),
    port: server.port,
    now: () => clock
  })
}

const txtLookups = (d: string): number => dns.queries.filter((q) => q === `TXT _mta-sts.${d}`).length

test('the TXT record is read at most every 5 minutes, the policy fetched again only for a new id or at max_age', async () => {
  const p = policies()
  const first = await p.lookup('cache.test')
  assert.equal(first.kind, 'policy')
  assert.equal(first.kind === 'policy' && first.policy.mode, 'enforce')
  await Promise.all([p.lookup('cache.test'), p.lookup('cache.test')])
  assert.equal(txtLookups('cache.test'), 1)
  assert.equal(server.fetches.get('cache.test'), 1)

  clock += RECHECK_MS // same id: the TXT record is read again, the policy is not fetched again
  await p.lookup('cache.test')
  assert.equal(txtLookups('cache.test'), 2)
  assert.equal(server.fetches.get('cache.test'), 1)

  dns.table.TXT!['_mta-sts.cache.test'] = ['v=STSv1; id=2'] // a new id: fetched again
  clock += RECHECK_MS
  await p.lookup('cache.test')
  assert.equal(server.fetches.get('cache.test'), 2)

  clock += 3600_000 // max_age (3600 s) over: fetched again although the id is the same
  await p.lookup('cache.test')
  assert.equal(server.fetches.get('cache.test'), 3)
})

test('a redirect is not followed, a policy over 64 KB or not text/plain is refused: delivered as without one', async () => {
  const p = policies()
  const redirect = await p.lookup('redirect.test')
  assert.deepEqual(redirect.kind === 'failed' && redirect.type, 'sts-policy-fetch-error')
  assert.equal(server.fetches.get('cache.test'), 3, 'the redirect target was not asked')
  const big = await p.lookup('big.test')
  assert.deepEqual(big.kind === 'failed' && big.type, 'sts-policy-invalid')
  const html = await p.lookup('html.test')
  assert.deepEqual(html.kind === 'failed' && html.type, 'sts-policy-invalid')
})

test('a policy server whose certificate does not verify, or on a non-public address, gives no policy', async () => {
  const untrusting = await policies({ ca: false }).lookup('private.test')
  assert.deepEqual(untrusting.kind === 'failed' && untrusting.type, 'sts-webpki-invalid')
  const guarded = await policies({ allowPrivate: false }).lookup('private.test')
  assert.equal(guarded.kind, 'failed')
  assert.match(guarded.kind === 'failed' ? guarded.reason : '', /non-public address/)
  assert.equal(server.fetches.get('private.test'), undefined)
})
