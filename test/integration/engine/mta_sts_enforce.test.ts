import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'
import { issueCert, selfSignedCert } from '../../helpers/test_certs.ts'
import { MtaStsServer, stsEngineEnv, stsPolicy } from '../../helpers/mta_sts_server.ts'

/**
 * MTA-STS `enforce` (docs/delivery.md, "MTA-STS"): mail goes only over TLS, with a certificate that verifies for
 * the MX host's name, to an MX host the policy names; otherwise the recipient is deferred with the reason, and
 * nothing is sent in clear. `trusted` (127.0.0.1) presents certificates of the test CA; `untrusted` (127.0.0.2, same
 * port) a self-signed one naming its MX hosts.
 */
let trusted: SmtpSink
let untrusted: SmtpSink
let plain: SmtpSink
let dns: DnsServer
let policies: MtaStsServer
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

const DOMAINS = ['sts-good.test', 'sts-mismatch.test', 'sts-badcert.test', 'sts-nocert.test', 'sts-second.test', 'sts-plain.test']

before(async () => {
  trusted = await SmtpSink.start({ tls: issueCert(['mx1.sts-good.test', 'mx.sts-mismatch.test', 'mx2.sts-second.test']) })
  untrusted = await SmtpSink.start({
    host: '127.0.0.2', port: trusted.port, tls: selfSignedCert(['mx.sts-badcert.test', 'mx1.sts-second.test'])
  })
  plain = await SmtpSink.start({ host: '127.0.0.3', port: trusted.port, noStartTls: true })
  policies = await MtaStsServer.start({
    'sts-good.test': stsPolicy('enforce', ['*.sts-good.test']),
    // the domain's MX host is not among the policy's
    'sts-mismatch.test': stsPolicy('enforce', ['mx.elsewhere.test']),
    'sts-badcert.test': stsPolicy('enforce', ['mx.sts-badcert.test']),
    // the trusted sink's certificate does not name mx.sts-nocert.test
    'sts-nocert.test': stsPolicy('enforce', ['mx.sts-nocert.test']),
    'sts-second.test': stsPolicy('enforce', ['*.sts-second.test']),
    'sts-plain.test': stsPolicy('enforce', ['mx.sts-plain.test'])
  })
  dns = await DnsServer.start({
    MX: {
      ...Object.fromEntries(DOMAINS.map((d) => [d, [{ exchange: d === 'sts-good.test' ? 'mx1.sts-good.test' : `mx.${d}`, priority: 10 }]])),
      // the preferred host's certificate does not verify; the next one's does
      'sts-second.test': [{ exchange: 'mx1.sts-second.test', priority: 10 }, { exchange: 'mx2.sts-second.test', priority: 20 }]
    },
    A: {
      'mx1.sts-good.test': ['127.0.0.1'],
      'mx.sts-mismatch.test': ['127.0.0.1'],
      'mx.sts-badcert.test': ['127.0.0.2'],
      'mx.sts-nocert.test': ['127.0.0.1'],
      'mx1.sts-second.test': ['127.0.0.2'],
      'mx2.sts-second.test': ['127.0.0.1'],
      'mx.sts-plain.test': ['127.0.0.3'], // offers no STARTTLS
      ...Object.fromEntries(DOMAINS.map((d) => [`mta-sts.${d}`, ['127.0.0.1']]))
    },
    TXT: Object.fromEntries(DOMAINS.map((d) => [`_mta-sts.${d}`, ['v=STSv1; id=20261128']]))
  })
  ob = await TestOutbox.start({
    env: { ...stsEngineEnv(dns.address, trusted.port, policies), OB_DELIVERY_RETRY_SCHEDULE: '1' }
  })
  org = await ob.org()
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await trusted.close()
  await untrusted.close()
  await plain.close()
  await policies.close()
  await dns.close()
})

/** The reason the recipient waits (its first `deferred`), else its bounce's (a slow first attempt may spend the schedule). */
async function reasonOf (id: string): Promise<string> {
  await events.until(() => events.of(id, 'deferred').length + events.of(id, 'bounced').length > 0)
  const d = events.of(id, 'deferred')[0]
  return String(d !== undefined ? d.data.smtp_response : events.of(id, 'bounced')[0]!.data.bounce_message)
}

async function send (to: string): Promise<string> {
  const msg = queuedMessage(org, { to: [to] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  return msg.id
}

test('an MX host matching the policy with a certificate that verifies for its name gets the mail over TLS', async () => {
  const id = await send('user@sts-good.test')
  await events.until(() => events.of(id, 'delivered').length === 1)
  assert.equal(trusted.to('user@sts-good.test')[0]!.secure, true)
})

test('an MX host the policy does not name is not connected to: deferred with the reason, then bounced soft', async () => {
  const sessions = trusted.connections
  const id = await send('user@sts-mismatch.test')
  const reason = await reasonOf(id)
  await events.until(() => events.of(id, 'bounced').length === 1)
  assert.match(reason, /MTA-STS policy of sts-mismatch\.test \(enforce\) allows MX hosts mx\.elsewhere\.test; mx\.sts-mismatch\.test does not match/)
  assert.equal(events.of(id, 'bounced')[0]!.data.bounce_type, 'soft')
  assert.match(String(events.of(id, 'bounced')[0]!.data.bounce_message), /^MTA-STS policy of sts-mismatch\.test \(enforce\)/)
  assert.equal(trusted.to('user@sts-mismatch.test').length, 0)
  assert.equal(trusted.connections, sessions, 'no connection was made for it')
})

test('a certificate that does not verify (untrusted, or not naming the MX host) defers: never sent in clear', async () => {
  const bad = await send('user@sts-badcert.test')
  const unnamed = await send('user@sts-nocert.test')
  assert.match(await reasonOf(bad),
    /MTA-STS policy of sts-badcert\.test \(enforce\) requires TLS with a valid certificate for mx\.sts-badcert\.test: the certificate is not signed by a trusted authority/)
  assert.match(await reasonOf(unnamed),
    /requires TLS with a valid certificate for mx\.sts-nocert\.test: the certificate does not name the MX host/)
  assert.equal(untrusted.to('user@sts-badcert.test').length, 0)
  assert.equal(trusted.to('user@sts-nocert.test').length, 0)
})

test('a matching host that offers no STARTTLS gets nothing in clear', async () => {
  const id = await send('user@sts-plain.test')
  assert.match(await reasonOf(id), /requires TLS with a valid certificate for mx\.sts-plain\.test: the server does not offer STARTTLS/)
  assert.equal(plain.to('user@sts-plain.test').length, 0)
})

test('when a matching host\'s certificate does not verify, the next matching host is tried in the same attempt', async () => {
  const id = await send('user@sts-second.test')
  await events.until(() => events.of(id, 'delivered').length === 1)
  assert.deepEqual(events.of(id).map((e) => e.type), ['delivered'])
  assert.equal(trusted.to('user@sts-second.test')[0]!.secure, true)
  assert.equal(untrusted.to('user@sts-second.test').length, 0)
})

test('the policy is fetched once per domain, not per message', async () => {
  const ids = await Promise.all([1, 2, 3].map(async (n) => await send(`user${n}@sts-good.test`)))
  await events.until(() => ids.every((id) => events.of(id, 'delivered').length === 1))
  // one fetch and one TXT look-up per engine thread at most (each thread keeps its own cache)
  assert.ok((policies.fetches.get('sts-good.test') ?? 0) <= ob.proc.config.engine.threads)
  assert.ok(dns.queries.filter((q) => q === 'TXT _mta-sts.sts-good.test').length <= ob.proc.config.engine.threads)
})
