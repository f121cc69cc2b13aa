import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'

let ob: TestOutbox
let org: TestOrg
let other: TestOrg
before(async () => {
  ob = await TestOutbox.start({ env: { OB_DOMAIN_VERIFICATION: 'off' } })
  org = await ob.org()
  other = await ob.org()
})
after(async () => { await ob.close() })

let n = 0
const uniqueName = (): string => `mail${process.pid}d${++n}.example.org`

test('adding a domain: 201, pending, with SPF, DKIM, return-path SPF and MX, and DMARC records', async () => {
  const name = uniqueName()
  const r = await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name: name.toUpperCase() } })
  assert.equal(r.status, 201)
  assert.match(r.body.id, /^dom_[0-9a-z]{26}$/)
  assert.equal(r.body.name, name)
  assert.equal(r.body.status, 'pending')
  assert.ok(!Number.isNaN(Date.parse(r.body.created_at)))
  const byName = new Map(r.body.records.map((x: { name: string, value: string }) => [x.name, x]))
  assert.match((byName.get(name) as { value: string }).value, /^v=spf1 /)
  const dkim = r.body.records.filter((x: { name: string }) => x.name.endsWith(`._domainkey.${name}`))
  assert.equal(dkim.length, 2)
  assert.match(dkim[0].value, /^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]+$/)
  // the ed25519 key (RFC 8463) under its own selector, published as the raw 32-byte key
  assert.match(dkim[1].value, /^v=DKIM1; k=ed25519; p=[A-Za-z0-9+/]{43}=$/)
  assert.notEqual(dkim[0].name, dkim[1].name)
  // the RSA key signs from the start (mail is sent once the domain is verified), the ed25519 key once its record is found
  assert.deepEqual(r.body.dkim.signing.map((s: { algorithm: string }) => s.algorithm), ['rsa-sha256'])
  assert.deepEqual(r.body.dkim.pending.map((s: { algorithm: string }) => s.algorithm), ['ed25519-sha256'])
  const returnPath = r.body.records.filter((x: { name: string }) => x.name === `bounces.${name}`)
    .map((x: { type: string, value: string }) => `${x.type} ${x.value}`)
  // The default public URL names an address, and an MX record must name a host: no value, and a warning saying why.
  assert.deepEqual(returnPath, [`TXT ${(byName.get(name) as { value: string }).value}`, 'MX '])
  const mx = r.body.records.find((x: { type: string }) => x.type === 'MX')
  assert.match(mx.warning, /OB_MX_HOST/)
  assert.ok(r.body.records.every((x: { verified: boolean }) => x.verified === false), 'nothing checked yet')
  assert.match((byName.get(`_dmarc.${name}`) as { value: string }).value, /^v=DMARC1;/)
  assert.equal(r.text.includes('PRIVATE'), false)
  const one = await ob.request('GET', `/v1/domains/${r.body.id}`, { key: org.adminKey })
  assert.equal(one.status, 200)
  assert.deepEqual(one.body, r.body)
})

test('a name verified by any organisation is 409; a pending claim blocks only a second claim of the same organisation', async () => {
  const name = uniqueName()
  assert.equal((await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name } })).status, 201)
  const mine = await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name } })
  assert.equal(mine.status, 409)
  assert.equal(mine.body.error.code, 'conflict')
  const theirs = await ob.request('POST', '/v1/domains', { key: other.adminKey, body: { name: `${name}.` } })
  assert.equal(theirs.status, 201)
  assert.equal(theirs.body.status, 'pending')
  const verified = await ob.request('POST', '/v1/domains', { key: other.adminKey, body: { name: org.domain } })
  assert.equal(verified.status, 409)
  assert.equal(verified.body.error.code, 'conflict')
})

test('names that are not domains are 400 naming the field', async () => {
  for (const name of ['localhost', 'has space.com', '-bad.com', 'a..b.com', '1.2.3.4', '']) {
    const r = await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name } })
    assert.equal(r.status, 400, name)
    assert.equal(r.body.error.code, 'validation_error')
    assert.equal(r.body.error.errors[0].field, 'name')
  }
  const missing = await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { nom: 'x.com' } })
  assert.deepEqual(missing.body.error.errors.map((e: { field: string }) => e.field).sort(), ['name', 'nom'])
})

test('the list is paginated and holds only the organisation\'s domains', async () => {
  await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name: uniqueName() } })
  await ob.request('POST', '/v1/domains', { key: other.adminKey, body: { name: uniqueName() } })
  const first = await ob.request('GET', '/v1/domains?limit=1', { key: org.adminKey })
  assert.equal(first.status, 200)
  assert.equal(first.body.data.length, 1)
  assert.equal(first.body.has_more, true)
  const rest = await ob.request('GET', `/v1/domains?limit=100&cursor=${first.body.next_cursor}`, { key: org.adminKey })
  assert.equal(rest.body.has_more, false)
  assert.equal(rest.body.next_cursor, null)
  const all = [...first.body.data, ...rest.body.data]
  assert.ok(all.some((d: { id: string }) => d.id === org.domainId))
  assert.ok(all.every((d: { id: string }) => ob.proc.cp.domain(org.orgId, d.id) !== undefined))
  assert.deepEqual(all.map((d: { id: string }) => d.id), all.map((d: { id: string }) => d.id).sort())
})

test('verify with OB_DOMAIN_VERIFICATION=off marks the domain verified', async () => {
  const d = (await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name: uniqueName() } })).body
  const r = await ob.request('POST', `/v1/domains/${d.id}/verify`, { key: org.adminKey })
  assert.equal(r.status, 200)
  assert.equal(r.body.status, 'verified')
  // Every record but the MX, which has no value without a configured MX host name.
  assert.deepEqual(r.body.records.filter((x: { status: string }) => x.status !== 'verified').map((x: { type: string }) => x.type), ['MX'])
  assert.ok(r.body.records.every((x: { status: string, verified: boolean }) => x.verified === (x.status === 'verified')))
  assert.ok(!Number.isNaN(Date.parse(r.body.verified_at)))
  assert.equal((await ob.request('GET', `/v1/domains/${d.id}`, { key: org.adminKey })).body.status, 'verified')
  // without a DNS check both keys sign from the first verify, and a rotation's pair from the next one
  assert.deepEqual(r.body.dkim.signing.map((s: { algorithm: string }) => s.algorithm), ['rsa-sha256', 'ed25519-sha256'])
  const rotated = await ob.request('POST', `/v1/domains/${d.id}/dkim/rotate`, { key: org.adminKey })
  assert.equal(rotated.status, 200, rotated.text)
  const pending = rotated.body.dkim.pending.map((s: { selector: string }) => s.selector)
  const again = await ob.request('POST', `/v1/domains/${d.id}/verify`, { key: org.adminKey })
  assert.deepEqual(again.body.dkim.signing.map((s: { selector: string }) => s.selector), pending)
})

test('delete: 204, the name is free again, later GET is 404', async () => {
  const name = uniqueName()
  const d = (await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name } })).body
  const del = await ob.request('DELETE', `/v1/domains/${d.id}`, { key: org.adminKey })
  assert.equal(del.status, 204)
  assert.equal((await ob.request('GET', `/v1/domains/${d.id}`, { key: org.adminKey })).status, 404)
  assert.equal((await ob.request('DELETE', `/v1/domains/${d.id}`, { key: org.adminKey })).status, 404)
  assert.equal((await ob.request('POST', '/v1/domains', { key: other.adminKey, body: { name } })).status, 201)
})

test('a domain with live keys bound cannot be deleted (409) until they are revoked', async () => {
  const d = (await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name: uniqueName() } })).body
  const k = (await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'bound', domain_id: d.id, permissions: ['send'] }
  })).body
  const refused = await ob.request('DELETE', `/v1/domains/${d.id}`, { key: org.adminKey })
  assert.equal(refused.status, 409)
  assert.equal(refused.body.error.code, 'conflict')
  assert.match(refused.body.error.message, /live API key/)
  assert.deepEqual(refused.body.error.details.api_key_ids, [k.id])
  assert.equal((await ob.request('DELETE', `/v1/api-keys/${k.id}`, { key: org.adminKey })).status, 204)
  assert.equal((await ob.request('DELETE', `/v1/domains/${d.id}`, { key: org.adminKey })).status, 204)
})

test('another organisation\'s domain is 403 on every endpoint; unknown ids are 404', async () => {
  const theirs = (await ob.request('POST', '/v1/domains', { key: other.adminKey, body: { name: uniqueName() } })).body
  for (const [method, path] of [
    ['GET', `/v1/domains/${theirs.id}`], ['DELETE', `/v1/domains/${theirs.id}`], ['POST', `/v1/domains/${theirs.id}/verify`],
    ['POST', `/v1/domains/${theirs.id}/dkim/rotate`]
  ] as const) {
    const r = await ob.request(method, path, { key: org.adminKey })
    assert.equal(r.status, 403, `${method} ${path}`)
    assert.equal(r.body.error.code, 'forbidden')
  }
  assert.equal((await ob.request('GET', `/v1/domains/${theirs.id}`, { key: other.adminKey })).status, 200)
  for (const [method, path] of [
    ['GET', '/v1/domains/dom_00000000000000000000000000'], ['POST', '/v1/domains/nope/verify'],
    ['POST', '/v1/domains/dom_00000000000000000000000000/dkim/rotate']
  ] as const) {
    assert.equal((await ob.request(method, path, { key: org.adminKey })).status, 404)
  }
})
