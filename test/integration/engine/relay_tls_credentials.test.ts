import { test } from 'node:test'
import assert from 'node:assert/strict'
import { publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { testCa } from '../../helpers/https_receiver.ts'
import { freePort } from '../../helpers/ports.ts'
import type { SinkOptions } from '../../helpers/smtp_sink.ts'

/**
 * OB_SMTP_RELAY with credentials: they go only over TLS to a relay whose certificate verifies (docs/delivery.md,
 * "TLS toward the relay"). The sink offers AUTH even in clear and records every attempt, so a credential sent
 * anywhere would show.
 */
async function relayWithCredentials (sink: SinkOptions, env: Record<string, string> = {}, logLevel?: string): Promise<RelayScenario> {
  const port = await freePort()
  return await startRelayScenario({
    sink: { ...sink, port, auth: true },
    env: { OB_SMTP_RELAY: `smtp://mailer:s3cret@127.0.0.1:${port}`, OB_DELIVERY_RETRY_SCHEDULE: '3', ...env },
    ...(logLevel !== undefined ? { logLevel } : {})
  })
}

async function sendOne (s: RelayScenario, to: string): Promise<string> {
  const msg = queuedMessage(s.org, { to: [to] })
  await publishQueued(s.ob.proc.nc, s.ob.proc.config, msg)
  return msg.id
}

/** The reason the recipient waits (its first `deferred`), else the bounce's, once either is there. */
async function reasonOf (s: RelayScenario, id: string): Promise<string> {
  await s.events.until(() => s.events.of(id, 'deferred').length + s.events.of(id, 'bounced').length > 0)
  const d = s.events.of(id, 'deferred')[0]
  return String(d !== undefined ? d.data.smtp_response : s.events.of(id, 'bounced')[0]!.data.bounce_message)
}

test('a relay presenting an untrusted certificate never receives the credentials: the message waits, then bounces soft', async () => {
  // a certificate of the test CA, naming 127.0.0.1, but the engine is not told to trust that CA
  const ca = testCa()
  const s = await relayWithCredentials({ tls: { key: ca.key, cert: ca.cert } })
  try {
    // the schedule's span (3 s) counts from acceptance: a first message settles the engine's start-up first
    const warm = await sendOne(s, 'warm-up@dest.example')
    await s.events.until(() => s.events.of(warm, 'bounced').length === 1)
    const id = await sendOne(s, 'someone@dest.example')
    await s.events.until(() => s.events.of(id, 'bounced').length === 1)
    const deferred = s.events.of(id, 'deferred')[0]!.data
    assert.match(String(deferred.smtp_response), /relay 127\.0\.0\.1: the certificate is not signed by a trusted authority/)
    assert.match(String(deferred.smtp_response), /credentials withheld/)
    assert.equal(s.events.of(id, 'bounced')[0]!.data.bounce_type, 'soft')
    assert.match(String(s.events.of(id, 'bounced')[0]!.data.bounce_message), /credentials withheld/)
    assert.deepEqual(s.sink.authAttempts, [], 'no AUTH reached the relay')
    assert.equal(s.sink.messages.length, 0)
  } finally { await s.close() }
})

test('a relay that does not offer STARTTLS never receives the credentials either', async () => {
  const s = await relayWithCredentials({ noStartTls: true })
  try {
    const id = await sendOne(s, 'someone@dest.example')
    assert.match(await reasonOf(s, id), /relay 127\.0\.0\.1: the server does not offer STARTTLS .*credentials withheld/)
    assert.deepEqual(s.sink.authAttempts, [])
    assert.equal(s.sink.messages.length, 0)
  } finally { await s.close() }
})

test('a relay whose certificate verifies against OB_SMTP_CA_FILE gets the credentials over TLS and the message', async () => {
  const ca = testCa() // its server certificate names 127.0.0.1
  const s = await relayWithCredentials({ tls: { key: ca.key, cert: ca.cert } }, { OB_SMTP_CA_FILE: ca.caFile })
  try {
    const id = await sendOne(s, 'someone@dest.example')
    await s.events.until(() => s.events.of(id, 'delivered').length === 1)
    assert.deepEqual(s.sink.authAttempts, [{ username: 'mailer', password: 's3cret', secure: true }])
    assert.equal(s.sink.messages[0]!.secure, true)
  } finally { await s.close() }
})

test('OB_SMTP_RELAY_TLS=insecure sends the credentials to an unverified relay, and says so at start', async () => {
  const s = await relayWithCredentials({}, { OB_SMTP_RELAY_TLS: 'insecure' }, 'warn')
  try {
    const id = await sendOne(s, 'someone@dest.example')
    await s.events.until(() => s.events.of(id, 'delivered').length === 1)
    assert.equal(s.sink.authAttempts.length, 1)
    assert.ok(s.logs.some((l) => l.level === 40 && /OB_SMTP_RELAY_TLS=insecure/.test(String(l.msg))), 'a warning at start')
  } finally { await s.close() }
})
