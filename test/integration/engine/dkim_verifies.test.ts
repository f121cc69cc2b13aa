import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { authenticate } from 'mailauth'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

let scenario: RelayScenario
before(async () => { ({ sink, ob, org, events } = scenario = await startRelayScenario()) })
after(async () => { await scenario.close() })

test('the DKIM signature verifies against the TXT record the domain publishes', async () => {
  const msg = queuedMessage(org, {
    to: ['dkim@dest.example'],
    subject: 'Grüße — signed',
    attachments: [{ filename: 'a.txt', content: Buffer.from('attached text').toString('base64'), content_type: 'text/plain' }]
  })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  const domain = ob.proc.cp.domain(org.orgId, org.domainId)!
  const txt = domain.records.find((r) => r.name === `${domain.dkim_selector}._domainkey.${domain.name}`)!
  const lookups: string[] = []
  const resolver = async (name: string, rr: string): Promise<unknown> => {
    lookups.push(`${rr} ${name}`)
    if (rr === 'TXT' && name === txt.name) return [[txt.value]]
    const err = new Error('not found') as Error & { code: string }
    err.code = 'ENOTFOUND'
    throw err
  }
  const raw = sink.to('dkim@dest.example')[0]!.raw
  const result = await authenticate(raw, {
    ip: '127.0.0.1', helo: 'engine.test', sender: sink.to('dkim@dest.example')[0]!.mailFrom, mta: 'sink.test', resolver
  } as Parameters<typeof authenticate>[1])
  const sig = result.dkim.results[0]!
  assert.equal(sig.status.result, 'pass', JSON.stringify(sig.status))
  assert.equal(sig.signingDomain, org.domain)
  assert.ok(lookups.includes(`TXT ${txt.name}`))

  // a changed byte breaks it: the check above can fail
  const text = raw.toString('utf8')
  assert.ok(text.includes('Hello there'))
  const tampered = Buffer.from(text.replace('Hello there', 'Hello thera'))
  const bad = await authenticate(tampered,
    { ip: '127.0.0.1', helo: 'engine.test', sender: 'x@y.z', mta: 'sink.test', resolver } as Parameters<typeof authenticate>[1])
  assert.notEqual(bad.dkim.results[0]!.status.result, 'pass')
})

test('the signature covers List-Unsubscribe and List-Unsubscribe-Post (RFC 8058), so neither can be altered', async () => {
  const msg = queuedMessage(org, { to: ['dkim-unsub@dest.example'], subject: 'one-click' })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  const domain = ob.proc.cp.domain(org.orgId, org.domainId)!
  const txt = domain.records.find((r) => r.name === `${domain.dkim_selector}._domainkey.${domain.name}`)!
  const resolver = async (name: string, rr: string): Promise<unknown> => {
    if (rr === 'TXT' && name === txt.name) return [[txt.value]]
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
  }
  const opts = { ip: '127.0.0.1', helo: 'engine.test', sender: 'x@y.z', mta: 'sink.test', resolver } as Parameters<typeof authenticate>[1]
  const raw = sink.to('dkim-unsub@dest.example')[0]!.raw
  const text = raw.toString('utf8')
  const head = text.slice(0, text.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ')
  assert.match(head, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m)
  const signature = /^DKIM-Signature: (.*)$/m.exec(head)![1]!
  const signed = /(?:^|;)\s*h=([^;]*)/.exec(signature)![1]!.split(':').map((h) => h.trim().toLowerCase())
  assert.ok(signed.includes('list-unsubscribe'), signed.join(':'))
  assert.ok(signed.includes('list-unsubscribe-post'), signed.join(':'))
  const result = await authenticate(raw, opts)
  assert.equal(result.dkim.results[0]!.status.result, 'pass', JSON.stringify(result.dkim.results[0]!.status))
  // Changing the one-click header breaks the signature.
  const tampered = Buffer.from(text.replace('List-Unsubscribe-Post: List-Unsubscribe=One-Click',
    'List-Unsubscribe-Post: List-Unsubscribe=Two-Clicks'))
  const bad = await authenticate(tampered, opts)
  assert.notEqual(bad.dkim.results[0]!.status.result, 'pass')
})
