import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { authenticate } from 'mailauth'
import { simpleParser } from 'mailparser'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { eventually } from '../../helpers/waiting.ts'

interface Rec { type: string, name: string, value: string, status?: string, listed_until?: string }
interface Selector { selector: string, algorithm: string }
interface DomainBody { records: Rec[], dkim: { signing: Selector[], pending: Selector[] } }

let sink: SmtpSink
let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let other: TestOrg
before(async () => {
  sink = await SmtpSink.start()
  dns = await DnsServer.start({ TXT: {} })
  ob = await TestOutbox.start({ env: { OB_SMTP_RELAY: sink.url, OB_DOMAIN_VERIFICATION: 'dns', OB_DNS_SERVERS: dns.address } })
  org = await ob.org()
  other = await ob.org()
})
after(async () => {
  await ob.close()
  await dns.close()
  await sink.close()
})

const dkimOf = (records: Rec[]): Rec[] => records.filter((r) => r.value.startsWith('v=DKIM1'))

/** Sends one message through the API and returns what the sink received. */
async function sendOne (rcpt: string, extra: Record<string, unknown> = {}): Promise<Buffer> {
  const r = await ob.request('POST', '/v1/messages/send', {
    key: org.adminKey, body: { from: `App <hello@${org.domain}>`, to: rcpt, subject: 'Signed', html: '<p>Hi</p>', ...extra }
  })
  assert.equal(r.status, 202, r.text)
  await eventually(() => sink.to(rcpt).length === 1, `delivery to ${rcpt}`)
  return sink.to(rcpt)[0]!.raw
}

/** `result:algorithm:selector` of each signature, checked against the TXT records `listed` (as a receiver's DNS). */
async function signatures (raw: Buffer, listed: Rec[]): Promise<string[]> {
  const resolver = async (name: string, rr: string): Promise<unknown> => {
    const values = listed.filter((r) => r.type === 'TXT' && r.name === name).map((r) => [r.value])
    if (rr === 'TXT' && values.length > 0) return values
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
  }
  const res = await authenticate(raw,
    { ip: '127.0.0.1', helo: 'engine.test', sender: `x@${org.domain}`, mta: 'sink.test', resolver } as Parameters<typeof authenticate>[1])
  return res.dkim.results.map((s) =>
    `${String(s.status.result)}:${String((s as { algo?: string }).algo)}:${String((s as { selector?: string }).selector)}`)
}

async function domain (): Promise<DomainBody> {
  const r = await ob.request('GET', `/v1/domains/${org.domainId}`, { key: org.adminKey })
  assert.equal(r.status, 200, r.text)
  return r.body as DomainBody
}

function publish (records: Rec[]): void {
  for (const r of records.filter((x) => x.type === 'TXT')) dns.table.TXT![r.name] = [r.value]
}

test('a new domain lists an RSA and an ed25519 key, and delivered mail carries both signatures, each verifying', async () => {
  const d = await domain()
  const dkim = dkimOf(d.records)
  assert.equal(dkim.length, 2)
  const [rsa, ed] = dkim as [Rec, Rec]
  assert.match(rsa.value, /^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/)
  // RFC 8463 §4.2: the raw 32-byte key
  assert.match(ed.value, /^v=DKIM1; k=ed25519; p=[A-Za-z0-9+/]{43}=$/)
  assert.notEqual(rsa.name, ed.name)
  assert.deepEqual(d.dkim.signing.map((s) => s.algorithm), ['rsa-sha256', 'ed25519-sha256'])
  const raw = await sendOne('both@dest.example', {
    html: '<p><img src="cid:logo"></p>',
    attachments: [
      { filename: 'logo.png', content: Buffer.from('png bytes').toString('base64'), content_type: 'image/png', content_id: 'logo' }
    ]
  })
  const [rsaSel, edSel] = d.dkim.signing.map((s) => s.selector) as [string, string]
  assert.deepEqual(await signatures(raw, d.records), [`pass:rsa-sha256:${rsaSel}`, `pass:ed25519-sha256:${edSel}`])
  // the inline image arrived as sent, in the related part
  const logo = (await simpleParser(raw)).attachments.find((a) => a.filename === 'logo.png')!
  assert.equal(logo.cid, 'logo')
  assert.equal(logo.contentDisposition, 'inline')
  assert.equal(logo.related, true)
  // without the ed25519 record only the RSA signature passes: the two are independent
  assert.deepEqual((await signatures(raw, [rsa])).map((s) => s.split(':')[0]), ['pass', 'neutral'])
})

test('rotation: the old pair signs until both new records verify, then the new pair; the old records stay listed for 7 days', async () => {
  const before = await domain()
  const oldSelectors = before.dkim.signing.map((s) => s.selector)
  publish(before.records)

  const rotated = await ob.request('POST', `/v1/domains/${org.domainId}/dkim/rotate`, { key: org.adminKey })
  assert.equal(rotated.status, 200, rotated.text)
  const pending = (rotated.body as DomainBody).dkim.pending
  assert.deepEqual(pending.map((s) => s.algorithm), ['rsa-sha256', 'ed25519-sha256'])
  const newSelectors = pending.map((s) => s.selector)
  assert.ok(newSelectors.every((s) => !oldSelectors.includes(s)))
  assert.deepEqual((rotated.body as DomainBody).dkim.signing.map((s) => s.selector), oldSelectors)
  const newRecords = dkimOf((rotated.body as DomainBody).records)
    .filter((r) => newSelectors.some((s) => r.name.startsWith(`${s}._domainkey.`)))
  assert.equal(newRecords.length, 2)
  // one rotation at a time
  const again = await ob.request('POST', `/v1/domains/${org.domainId}/dkim/rotate`, { key: org.adminKey })
  assert.equal(again.status, 409)
  assert.equal(again.body.error.code, 'conflict')
  assert.deepEqual(again.body.error.details.selectors, newSelectors)
  // another organisation's domain
  const foreign = await ob.request('POST', `/v1/domains/${org.domainId}/dkim/rotate`, { key: other.adminKey })
  assert.equal(foreign.status, 403)
  assert.equal(ob.proc.cp.domain(org.orgId, org.domainId)!.dkim_next!.rsa.selector, newSelectors[0])

  // only one of the new records published: the old pair keeps signing
  dns.table.TXT![newRecords[0]!.name] = [newRecords[0]!.value]
  const half = await ob.request('POST', `/v1/domains/${org.domainId}/verify`, { key: org.adminKey })
  assert.equal(half.status, 200, half.text)
  assert.deepEqual((half.body as DomainBody).dkim.signing.map((s) => s.selector), oldSelectors)
  const listed = [...before.records, ...newRecords]
  const early = await sendOne('rotating@dest.example')
  assert.deepEqual(await signatures(early, listed), [`pass:rsa-sha256:${oldSelectors[0]!}`, `pass:ed25519-sha256:${oldSelectors[1]!}`])

  publish(newRecords)
  const verified = await ob.request('POST', `/v1/domains/${org.domainId}/verify`, { key: org.adminKey })
  assert.equal(verified.status, 200, verified.text)
  const after = await domain()
  assert.deepEqual(after.dkim.signing.map((s) => s.selector), newSelectors)
  assert.deepEqual(after.dkim.pending, [])
  const old = dkimOf(after.records).filter((r) => oldSelectors.some((s) => r.name.startsWith(`${s}._domainkey.`)))
  assert.equal(old.length, 2, JSON.stringify(after.records))
  for (const r of old) {
    const until = Date.parse(r.listed_until!)
    assert.ok(Math.abs(until - Date.now() - 7 * 24 * 3600 * 1000) < 60_000, r.listed_until)
  }
  await eventually(() => ob.proc.cp.domain(org.orgId, org.domainId)!.dkim_selector === newSelectors[0], 'the engine to see the new keys')
  const late = await sendOne('rotated@dest.example')
  assert.deepEqual(await signatures(late, after.records),
    [`pass:rsa-sha256:${newSelectors[0]!}`, `pass:ed25519-sha256:${newSelectors[1]!}`])
})

test('a domain stored without an ed25519 key gets one when read; it signs only once its record is verified', async () => {
  const key = `${org.orgId}.${org.domainId}`
  const stored = ob.proc.cp.domains.get(key)!
  const { dkim_ed25519: _key, dkim_ed25519_verified_at: _at, ...legacy } = stored
  await ob.proc.cp.domains.put(key, legacy)
  await eventually(() => ob.proc.cp.domains.get(key)!.dkim_ed25519 === undefined, 'the stored record')
  const rsaOnly = await sendOne('legacy@dest.example')
  assert.deepEqual((await signatures(rsaOnly, (await domain()).records)).map((s) => s.split(':').slice(0, 2).join(':')),
    ['pass:rsa-sha256'])

  const d = await domain()
  assert.equal(dkimOf(d.records).filter((r) => r.value.includes('k=ed25519')).length >= 1, true)
  assert.deepEqual(d.dkim.pending.map((s) => s.algorithm), ['ed25519-sha256'])
  const unverified = await sendOne('legacy-pending@dest.example')
  assert.equal((await signatures(unverified, d.records)).length, 1, 'never signed with an unpublished key')

  publish(d.records)
  const v = await ob.request('POST', `/v1/domains/${org.domainId}/verify`, { key: org.adminKey })
  assert.equal(v.status, 200, v.text)
  assert.deepEqual((v.body as DomainBody).dkim.signing.map((s) => s.algorithm), ['rsa-sha256', 'ed25519-sha256'])
  await eventually(() => ob.proc.cp.domains.get(key)!.dkim_ed25519_verified_at !== undefined, 'the verified key')
  const both = await sendOne('legacy-verified@dest.example')
  assert.deepEqual((await signatures(both, d.records)).map((s) => s.split(':').slice(0, 2).join(':')),
    ['pass:rsa-sha256', 'pass:ed25519-sha256'])
})
