import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink, type SinkMessage } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { inboundClient } from '../../helpers/inbound.ts'
import { dsn } from '../../helpers/reports.ts'
import { eventually } from '../../helpers/waiting.ts'
import { createOrganization } from '../../../gateway/control/orgs.ts'

// A domain with its own return-path and tracking hosts, checked by DNS through the local DNS server: mail carries
// them once verified, tracking requests are answered on the verified host only, and bounces to the return-path host
// still reach the bounce processing.
const PUBLIC_HOST = 'api.outbox.test'
let ob: TestOutbox
let dns: DnsServer
let sink: SmtpSink
let org: TestOrg
let other: TestOrg
let events: EventReader

interface Rec { type: string, name: string, value: string, verified: boolean, warning?: string, status?: string }

before(async () => {
  sink = await SmtpSink.start()
  dns = await DnsServer.start({ TXT: {}, MX: {}, CNAME: {} })
  ob = await TestOutbox.start({
    env: {
      OB_DOMAIN_VERIFICATION: 'dns', OB_DNS_SERVERS: dns.address, OB_MX_HOST: 'mx.outbox.test', OB_SMTP_RELAY: sink.url,
      OB_PUBLIC_URL: `https://${PUBLIC_HOST}`, OB_TRACKING_RATE_LIMIT: '60'
    }
  })
  org = await ob.org()
  other = await ob.org()
  events = await EventReader.open(ob.proc.nc, org.orgId)
})
after(async () => {
  events.close()
  await ob.close()
  await sink.close()
  await dns.close()
})

async function patch (who: TestOrg, body: unknown): Promise<{ status: number, body: any }> {
  return await ob.request('PATCH', `/v1/domains/${who.domainId}`, { key: who.adminKey, body })
}

/** A GET of `path` on the gateway's port, saying `host` in the Host header (as a browser following the link would). */
async function getOn (host: string, path: string): Promise<{ status: number, location?: string, body: string }> {
  return await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: ob.proc.gateway!.port, path, headers: { host } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({
        status: res.statusCode!,
        body: Buffer.concat(chunks).toString(),
        ...(res.headers.location !== undefined ? { location: res.headers.location } : {})
      }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** Publishes the records the domain lists for `host` in the local DNS server. */
function publishHost (records: Rec[], host: string): void {
  for (const r of records.filter((x) => x.name === host)) {
    if (r.type === 'TXT') dns.table.TXT![host] = [r.value]
    if (r.type === 'CNAME') dns.table.CNAME![host] = r.value
    if (r.type === 'MX') dns.table.MX![host] = [{ priority: Number(r.value.split(' ')[0]), exchange: r.value.split(' ')[1]! }]
  }
}

async function send (who: TestOrg, to: string): Promise<{ id: string, mail: SinkMessage }> {
  const r = await ob.request('POST', '/v1/messages/send', {
    key: who.adminKey,
    body: { from: `news@${who.domain}`, to, subject: 'Hosts', html: '<p><a href="https://shop.example/sale">Sale</a></p>' }
  })
  assert.equal(r.status, 202, r.text)
  const mail = await eventually(() => sink.to(to)[0], `the message to ${to} at the sink`)
  return { id: r.body.id, mail }
}

test('a host must be a subdomain of the caller\'s own domain, not bounces.<domain>, not the other host, ' +
  'and not in a domain another organisation verified', async () => {
  const d = org.domain
  const refused = [
    [{ tracking_host: 'links.elsewhere.test' }, 'tracking_host'],
    [{ tracking_host: d }, 'tracking_host'],
    [{ return_path_host: `bounces.${d}` }, 'return_path_host'],
    [{ tracking_host: `x.${d}`, return_path_host: `x.${d}` }, 'return_path_host'],
    [{ tracking_host: `links.${d}\r\nSet-Cookie: a=b` }, 'tracking_host'],
    [{ tracking_host: `-links.${d}` }, 'tracking_host']
  ] as const
  for (const [body, field] of refused) {
    const r = await patch(org, body)
    assert.equal(r.status, 400, JSON.stringify(body))
    assert.equal(r.body.error.code, 'validation_error')
    assert.equal(r.body.error.field, field, JSON.stringify(body))
  }
  assert.equal((await patch(org, {})).status, 400, 'an empty change is refused')
  // another organisation's key cannot choose hosts of this domain
  const foreign = await ob.request('PATCH', `/v1/domains/${org.domainId}`, { key: other.adminKey, body: { tracking_host: `t.${d}` } })
  assert.equal(foreign.status, 403)
  // a subdomain verified by another organisation is that organisation's DNS
  await createOrganization(ob.proc.cp, ob.proc.config, { name: 'sub', domain: `mail.${d}`, plan: 'pro' })
  const nested = await eventually(async () => {
    const r = await patch(org, { tracking_host: `t.mail.${d}` })
    return r.status === 409 ? r : undefined
  }, 'a host in another organisation\'s domain to be refused')
  assert.equal(nested.body.error.code, 'conflict')
  assert.equal(ob.proc.cp.domain(org.orgId, org.domainId)?.tracking, undefined, 'nothing was stored')
})

test('chosen hosts are listed with their records and used only once DNS verification finds them', async () => {
  const d = org.domain
  const r = await patch(org, { return_path_host: `RP.${d}.`, tracking_host: `links.${d}` })
  assert.equal(r.status, 200)
  assert.deepEqual(r.body.return_path_host, { host: `rp.${d}`, verified: false })
  assert.deepEqual(r.body.tracking_host, { host: `links.${d}`, verified: false })
  const own = (r.body.records as Rec[]).filter((x) => x.name === `rp.${d}` || x.name === `links.${d}`)
  assert.deepEqual(own.map((x) => [x.type, x.name, x.value, x.verified]), [
    ['TXT', `rp.${d}`, 'v=spf1 a:api.outbox.test ~all', false],
    ['MX', `rp.${d}`, '10 mx.outbox.test', false],
    ['CNAME', `links.${d}`, PUBLIC_HOST, false]
  ])
  assert.equal(r.body.status, 'verified')

  const before = await send(org, 'early@remote.test')
  assert.match(before.mail.mailFrom, new RegExp(`@bounces\\.${d.replace(/\./g, '\\.')}$`), 'a pending host is not used')
  assert.ok(before.mail.raw.toString().includes(`https://${PUBLIC_HOST}/t/c/`))

  // the return-path host needs its MX as well as its SPF record: bounces must reach Outbox
  dns.table.TXT![`rp.${d}`] = [(r.body.records as Rec[]).find((x) => x.name === `rp.${d}` && x.type === 'TXT')!.value]
  publishHost(r.body.records, `links.${d}`)
  const first = await ob.request('POST', `/v1/domains/${org.domainId}/verify`, { key: org.adminKey })
  assert.deepEqual(first.body.return_path_host, { host: `rp.${d}`, verified: false })
  assert.deepEqual(first.body.tracking_host, { host: `links.${d}`, verified: true })
  publishHost(r.body.records, `rp.${d}`)
  const v = await ob.request('POST', `/v1/domains/${org.domainId}/verify`, { key: org.adminKey })
  assert.equal(v.status, 200)
  assert.deepEqual(v.body.return_path_host, { host: `rp.${d}`, verified: true })
  assert.deepEqual(v.body.tracking_host, { host: `links.${d}`, verified: true })
  assert.equal(v.body.status, 'verified')
})

test('mail carries the verified hosts: links on the tracking host, the envelope sender at the return-path host', async () => {
  const d = org.domain
  const { id, mail } = await send(org, 'reader@remote.test')
  assert.match(mail.mailFrom, new RegExp(`^bounces\\+${id}-[0-9a-z]{20}@rp\\.${d.replace(/\./g, '\\.')}$`))
  const raw = mail.raw.toString().replace(/=\r\n/g, '').replace(/=3D/g, '=')
  assert.ok(raw.includes(`https://links.${d}/t/c/`), 'the click link is on the tracking host')
  assert.ok(raw.includes(`https://links.${d}/t/o/`), 'the open pixel is on the tracking host')
  assert.ok(!raw.includes(`${PUBLIC_HOST}/t/`), 'no link on the public host')
  const unsubscribe = mail.headers.get('list-unsubscribe') ?? ''
  assert.ok(unsubscribe.includes(`<https://links.${d}/t/u/`), unsubscribe)
  assert.ok(unsubscribe.includes(`@rp.${d}?subject=unsubscribe>`), unsubscribe)
  const click = new URL(/https:\/\/links\.[^"\s]+\/t\/c\/[A-Za-z0-9_.-]+/.exec(raw)![0]).pathname

  const onHost = await getOn(`links.${d}`, click)
  assert.equal(onHost.status, 302)
  assert.equal(onHost.location, 'https://shop.example/sale')
  assert.equal((await getOn(PUBLIC_HOST, click)).status, 302, 'the public host keeps working')
  assert.equal((await getOn(`127.0.0.1:${ob.proc.gateway!.port}`, click)).status, 302, 'and so does the address')
  for (const host of ['links.unverified.test', `other.${d}`, `rp.${d}`, `links.${d}.evil.test`, 'bad_host.test']) {
    const refused = await getOn(host, click)
    assert.equal(refused.status, 421, host)
    assert.equal(JSON.parse(refused.body).error.code, 'misdirected_request', host)
    assert.ok(!refused.body.includes(host), 'the host is not written back')
  }
  await eventually(() => events.of('clicked').some((e) => e.message_id === id), 'the click recorded')
  // what a reverse proxy asks before it obtains a certificate on demand
  for (const [name, status] of [[`links.${d}`, 200], [`LINKS.${d}.`, 200], [PUBLIC_HOST, 200], ['links.unverified.test', 421],
    [`rp.${d}`, 421], ['127.0.0.1', 421], ['localhost', 421], ['', 400]] as const) {
    const r = await ob.request('GET', `/t/host?domain=${encodeURIComponent(name)}`)
    assert.equal(r.status, status, name)
    if (status === 421) assert.equal(r.body.error.code, 'misdirected_request')
  }
})

test('a tracking host serves its own organisation\'s links only', async () => {
  const r = await patch(other, { tracking_host: `t.${other.domain}` })
  publishHost(r.body.records, `t.${other.domain}`)
  const v = await ob.request('POST', `/v1/domains/${other.domainId}/verify`, { key: other.adminKey })
  assert.deepEqual(v.body.tracking_host, { host: `t.${other.domain}`, verified: true })
  const { id, mail } = await send(org, 'crossed@remote.test')
  const raw = mail.raw.toString().replace(/=\r\n/g, '').replace(/=3D/g, '=')
  const click = new URL(/https:\/\/links\.[^"\s]+\/t\/c\/[A-Za-z0-9_.-]+/.exec(raw)![0]).pathname
  const crossed = await getOn(`t.${other.domain}`, click)
  assert.equal(crossed.status, 421)
  assert.equal(JSON.parse(crossed.body).error.code, 'misdirected_request')
  assert.equal((await getOn('links.unverified.test', click)).status, 421)
  await events.settle(1000)
  assert.equal(events.of('clicked').filter((e) => e.message_id === id).length, 0, 'a refused request records nothing')
})

test('a bounce sent to the return-path host reaches the bounce processing', async () => {
  const rcpt = 'gone@remote.test'
  const { id, mail } = await send(org, rcpt)
  const smtp = inboundClient(ob)
  try {
    await smtp.sendMail({
      envelope: { from: '', to: [mail.mailFrom] },
      raw: dsn({
        to: mail.mailFrom, recipient: rcpt, status: '5.1.1', diagnostic: '550 5.1.1 user unknown', originalId: id, domain: org.domain
      })
    })
  } finally {
    smtp.close()
  }
  const bounced = await events.waitFor('bounced')
  const e = bounced.find((x) => x.message_id === id)
  assert.ok(e !== undefined)
  assert.equal((e.data as { bounce_type: string }).bounce_type, 'hard')
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, rcpt), true)
})

test('clearing a host goes back to the default at once; mail accepted before keeps the host it was accepted with', async () => {
  const scheduled = await ob.request('POST', '/v1/messages/send', {
    key: org.adminKey,
    body: {
      from: `news@${org.domain}`, to: 'queued@remote.test', subject: 'Later', html: '<p><a href="https://shop.example/">x</a></p>',
      scheduled_at: new Date(Date.now() + 3000).toISOString()
    }
  })
  assert.equal(scheduled.status, 202, scheduled.text)
  const r = await patch(org, { tracking_host: null })
  assert.equal(r.status, 200)
  assert.equal(r.body.tracking_host, undefined)
  assert.ok(!(r.body.records as Rec[]).some((x) => x.type === 'CNAME'))
  const { mail } = await send(org, 'later@remote.test')
  assert.ok(mail.raw.toString().replace(/=\r\n/g, '').includes(`https://${PUBLIC_HOST}/t/`))
  assert.match(mail.mailFrom, /@rp\./, 'the return-path host is kept')
  const queued = await eventually(() => sink.to('queued@remote.test')[0], 'the scheduled message at the sink')
  assert.ok(queued.raw.toString().replace(/=\r\n/g, '').includes(`https://links.${org.domain}/t/c/`), 'accepted with the host')
})

test('requests on a refused host are metered per address like any other', async () => {
  const statuses = new Set<number>()
  for (let i = 0; i < 120 && !statuses.has(429); i++) statuses.add((await getOn('links.unverified.test', '/t/o/x')).status)
  assert.ok(statuses.has(429), `statuses seen: ${[...statuses].join(', ')}`)
  assert.deepEqual([...statuses].filter((s) => s !== 421 && s !== 429), [])
})
