import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Resolver } from 'node:dns/promises'
import { authenticate } from 'mailauth'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher
let dns: DnsServer

let scenario: RelayScenario
before(async () => {
  ({ sink, ob, org, events } = scenario = await startRelayScenario())
  dns = await DnsServer.start({ TXT: {} })
})
after(async () => {
  await scenario.close()
  await dns.close()
})

test('with the SPF records the domain was told to publish (and no DKIM), ' +
  'delivered mail passes SPF on its return path and DMARC through it', async () => {
  const domain = ob.proc.cp.domain(org.orgId, org.domainId)!
  // Everything Outbox asks the owner to publish except DKIM, so DMARC can only pass through aligned SPF.
  for (const r of domain.records) {
    if (r.type === 'TXT' && !r.value.startsWith('v=DKIM1')) (dns.table.TXT![r.name] ??= []).push(r.value)
  }
  const msg = queuedMessage(org, { to: ['spf@dest.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  const delivered = sink.to('spf@dest.example')[0]!
  assert.match(delivered.mailFrom, new RegExp(`@bounces\\.${org.domain.replace(/\./g, '\\.')}$`))

  const resolver = new Resolver({ timeout: 2000, tries: 2 })
  resolver.setServers([dns.address])
  // The sink took the message over loopback: 127.0.0.1 is the address a receiver would check.
  const result = await authenticate(delivered.raw, {
    ip: '127.0.0.1', helo: 'engine.test', sender: delivered.mailFrom, mta: 'sink.test',
    resolver: async (name: string, rr: string) => await resolver.resolve(name, rr)
  } as Parameters<typeof authenticate>[1])
  const spf = result.spf
  assert.ok(spf !== false)
  assert.equal(spf.status.result, 'pass', JSON.stringify(spf))
  assert.equal(spf.domain, `bounces.${org.domain}`)
  assert.notEqual(result.dkim.results[0]?.status.result, 'pass')
  const dmarc = result.dmarc
  assert.ok(dmarc !== false)
  assert.equal(dmarc.status.result, 'pass', JSON.stringify(dmarc))
})
