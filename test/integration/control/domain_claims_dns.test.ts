import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'

let ob: TestOutbox
let dns: DnsServer
let owner: TestOrg
let squatter: TestOrg
before(async () => {
  dns = await DnsServer.start({ TXT: {} })
  ob = await TestOutbox.start({ env: { OB_DOMAIN_VERIFICATION: 'dns', OB_DNS_SERVERS: dns.address } })
  owner = await ob.org()
  squatter = await ob.org()
})
after(async () => {
  await ob.close()
  await dns.close()
})

interface Rec { type: string, name: string, value: string, status?: string }
const isDkim = (r: Rec): boolean => r.value.startsWith('v=DKIM1')

test('a squatter\'s earlier claim does not block the owner: the owner verifies by DNS, ' +
  'the squatter\'s claim lapses and cannot send', async () => {
  const name = `claimed${process.pid}.example.net`
  const squat = await ob.request('POST', '/v1/domains', { key: squatter.adminKey, body: { name } })
  assert.equal(squat.status, 201)
  assert.equal(squat.body.status, 'pending')

  const real = await ob.request('POST', '/v1/domains', { key: owner.adminKey, body: { name } })
  assert.equal(real.status, 201, JSON.stringify(real.body))
  assert.equal(real.body.status, 'pending')
  // Each claim has its own DKIM key, so the published record names one claimant only.
  const ownerDkim = (real.body.records as Rec[]).find(isDkim)!
  const squatDkim = (squat.body.records as Rec[]).find(isDkim)!
  assert.notEqual(ownerDkim.value, squatDkim.value)
  const again = await ob.request('POST', '/v1/domains', { key: owner.adminKey, body: { name } })
  assert.equal(again.status, 409, 'one claim per organisation')

  // The domain's owner publishes the records of their own claim.
  for (const rec of real.body.records as Rec[]) if (rec.type === 'TXT') dns.table.TXT![rec.name] = [rec.value]

  const early = await ob.request('POST', `/v1/domains/${squat.body.id}/verify`, { key: squatter.adminKey })
  assert.equal(early.status, 200)
  assert.equal(early.body.status, 'pending')
  assert.equal(early.body.records.find(isDkim).status, 'missing')

  const verified = await ob.request('POST', `/v1/domains/${real.body.id}/verify`, { key: owner.adminKey })
  assert.equal(verified.status, 200)
  assert.equal(verified.body.status, 'verified')

  const late = await ob.request('POST', `/v1/domains/${squat.body.id}/verify`, { key: squatter.adminKey })
  assert.equal(late.status, 409)
  assert.equal(late.body.error.code, 'conflict')
  assert.equal(late.body.error.details.status, 'lapsed')
  assert.equal((await ob.request('GET', `/v1/domains/${squat.body.id}`, { key: squatter.adminKey })).body.status, 'lapsed')
  assert.equal((await ob.request('GET', `/v1/domains/${real.body.id}`, { key: owner.adminKey })).body.status, 'verified')
  const third = await ob.request('POST', '/v1/domains', { key: squatter.adminKey, body: { name } })
  assert.equal(third.status, 409, 'a verified name cannot be claimed')

  // A key bound to the lapsed claim cannot send from the domain; the owner's can.
  const squatKey = await ob.request('POST', '/v1/api-keys', {
    key: squatter.adminKey, body: { name: 'squat', domain_id: squat.body.id, permissions: ['send'] }
  })
  assert.equal(squatKey.status, 201)
  const message = { from: `ceo@${name}`, to: 'someone@example.com', subject: 'hello', text: 'hi' }
  const refused = await ob.request('POST', '/v1/messages/send', { key: squatKey.body.key, body: message })
  assert.equal(refused.status, 403)
  assert.equal(refused.body.error.code, 'forbidden')
  const ownerKey = await ob.request('POST', '/v1/api-keys', {
    key: owner.adminKey, body: { name: 'real', domain_id: real.body.id, permissions: ['send'] }
  })
  assert.equal((await ob.request('POST', '/v1/messages/send', { key: ownerKey.body.key, body: message })).status, 202)

  // Bounces to the domain's return path belong to the owner; deleting the lapsed claim leaves the owner's name alone.
  assert.equal(ob.proc.cp.domainOwner(name)?.org_id, owner.orgId)
  assert.equal((await ob.request('DELETE', `/v1/api-keys/${squatKey.body.id}`, { key: squatter.adminKey })).status, 204)
  assert.equal((await ob.request('DELETE', `/v1/domains/${squat.body.id}`, { key: squatter.adminKey })).status, 204)
  assert.equal(ob.proc.cp.domainOwner(name)?.id, real.body.id)
})
