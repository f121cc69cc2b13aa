import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTransport } from 'nodemailer'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { addRoute } from '../../helpers/inbound.ts'
import { RawSmtp } from '../../helpers/raw_smtp.ts'

let dir: string
let dns: DnsServer
let tls: TestOutbox
let plain: TestOutbox
let org: TestOrg
let events: EventReader

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'outbox-tls-'))
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' })
  dns = await DnsServer.start({})
  tls = await TestOutbox.start({
    env: { OB_DNS_SERVERS: dns.address, OB_SMTP_INBOUND_TLS_CERT: join(dir, 'cert.pem'), OB_SMTP_INBOUND_TLS_KEY: join(dir, 'key.pem') }
  })
  plain = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address }, nats: tls.nats, redis: tls.redisServer })
  org = await tls.org()
  await addRoute(tls, org, `*@${org.domain}`, false)
  events = await EventReader.open(tls.proc.nc, org.orgId)
})
after(async () => {
  events.close()
  await plain.close()
  await tls.close()
  await dns.close()
  rmSync(dir, { recursive: true, force: true })
})

async function ehlo (port: number): Promise<string> {
  const s = await RawSmtp.open(port)
  const reply = await s.command('EHLO client.test')
  s.close()
  return reply
}

test('with a certificate and key configured, STARTTLS is offered and mail arrives over TLS', async () => {
  assert.match(await ehlo(tls.proc.inbound!.port), /STARTTLS/)
  const t = createTransport({
    host: '127.0.0.1', port: tls.proc.inbound!.port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false }
  })
  await t.sendMail({ from: 'a@sender.test', to: `tls@${org.domain}`, subject: 'over TLS', text: 'encrypted' })
  t.close()
  const [e] = await events.waitFor('inbound.received')
  assert.equal((e!.data as any).subject, 'over TLS')
})

test('without them, STARTTLS and AUTH are not offered', async () => {
  const reply = await ehlo(plain.proc.inbound!.port)
  assert.doesNotMatch(reply, /STARTTLS/)
  assert.doesNotMatch(reply, /AUTH/)
  assert.doesNotMatch(await ehlo(tls.proc.inbound!.port), /AUTH/)
})
