import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import { Webhook } from 'standardwebhooks'
import {
  activeSecrets, signatureHeader, signedHeaders, signingKey, standardSignatureHeader, standardSigningKey, verifySignature
} from '../../../webhooks/sign.ts'
import type { WebhookRecord } from '../../../protocol/mod.ts'
import { verifyWebhook } from '../../../docs/verify_webhook.ts'

const secret = 'whsec_abcdefghijklmnopqrstuvwxyz012345'
const body = '{"id":"evt_1","type":"delivered","timestamp":"2026-01-01T00:00:00.000Z","data":{"message_id":"msg_1"}}'
const t = 1_800_000_000
const now = t * 1000

test('the header is t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>', () => {
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')
  assert.equal(signatureHeader(secret, body, t), `t=${t},v1=${expected}`)
  assert.equal(signatureHeader(secret, Buffer.from(body), t), `t=${t},v1=${expected}`)
})

for (const [name, verify] of [['library', verifySignature], ['docs/verify_webhook.ts', verifyWebhook]] as const) {
  test(`${name}: accepts the signed body, refuses a tampered body, a wrong secret and a bad header`, () => {
    const header = signatureHeader(secret, body, t)
    assert.deepEqual(verify(body, header, secret, { now }), { ok: true, timestamp: t })
    assert.equal(verify(Buffer.from(body), header, secret, { now }).ok, true)
    assert.equal(verify(body.replace('msg_1', 'msg_2'), header, secret, { now }).reason, 'signature_mismatch')
    assert.equal(verify(body + ' ', header, secret, { now }).reason, 'signature_mismatch')
    assert.equal(verify(body, header, secret + 'x', { now }).reason, 'signature_mismatch')
    for (const bad of [undefined, '', 'garbage', `t=${t}`, 'v1=' + 'a'.repeat(64), `t=abc,v1=${'a'.repeat(64)}`, `t=${t},v1=XYZ`]) {
      assert.equal(verify(body, bad, secret, { now }).reason, 'malformed_header', String(bad))
    }
  })

  test(`${name}: the timestamp must be within the tolerance (300 s by default)`, () => {
    const header = signatureHeader(secret, body, t)
    assert.equal(verify(body, header, secret, { now: now + 300_000 }).ok, true)
    assert.equal(verify(body, header, secret, { now: now + 301_000 }).reason, 'timestamp_out_of_tolerance')
    assert.equal(verify(body, header, secret, { now: now - 301_000 }).reason, 'timestamp_out_of_tolerance')
    assert.equal(verify(body, header, secret, { now: now + 3_600_000, toleranceS: 7200 }).ok, true)
  })

  test(`${name}: any one of several v1 values may match`, () => {
    const good = signatureHeader(secret, body, t).split(',')[1]!
    const other = signatureHeader('whsec_old', body, t).split(',')[1]!
    assert.equal(verify(body, `t=${t},${other},${good}`, secret, { now }).ok, true)
    assert.equal(verify(body, `t=${t}, ${good}, ${other}`, secret, { now }).ok, true)
    assert.equal(verify(body, `t=${t},${other}`, secret, { now }).ok, false)
  })

  test(`${name}: signs and verifies any body and secret`, () => {
    fc.assert(fc.property(fc.string(), fc.string({ minLength: 1 }), fc.integer({ min: 1, max: 4_000_000_000 }), (b, s, ts) => {
      const h = signatureHeader(s, b, ts)
      return verify(b, h, s, { now: ts * 1000 }).ok && (b.length === 0 || !verify(b + 'x', h, s, { now: ts * 1000 }).ok)
    }), { numRuns: 200 })
  })
}

test('signing with the cached key object gives the header signing with the secret gives, for text and bytes', () => {
  fc.assert(fc.property(fc.string({ minLength: 1 }), fc.string(), fc.integer({ min: 0, max: 2 ** 40 }), (secret, body, t) => {
    const expected = signatureHeader(secret, body, t)
    assert.equal(signatureHeader(signingKey(secret), body, t), expected)
    assert.equal(signatureHeader(signingKey(secret), Buffer.from(body), t), expected)
    assert.equal(expected, `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`)
  }))
})

test('webhook-signature is keyed with the base64-decoded secret, as standardwebhooks reads it', () => {
  const id = 'evt_0000000000000000000000000a'
  const header = standardSignatureHeader([standardSigningKey(secret)], id, t, body)
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  assert.equal(header, `v1,${createHmac('sha256', key).update(`${id}.${t}.${body}`).digest('base64')}`)
  const sign = new Webhook(secret).sign(id, new Date(now), body)
  assert.equal(header, sign)
})

test('during a grace period both signature headers carry one signature per secret; after it, one', () => {
  const old = 'whsec_ZYXWVUTSRQPONMLKJIHGFEDCBA987654'
  const w: Pick<WebhookRecord, 'secret' | 'previous_secret' | 'previous_secret_expires_at'> = {
    secret, previous_secret: old, previous_secret_expires_at: new Date(now + 60_000).toISOString()
  }
  assert.deepEqual(activeSecrets(w, now), [secret, old])
  assert.deepEqual(activeSecrets(w, now + 60_000), [secret])
  assert.deepEqual(activeSecrets({ secret }, now), [secret])
  const record = { ...w, id: 'wh_1', org_id: 'org_1', url: 'https://example.com/', events: ['delivered'], status: 'active', created_at: '', updated_at: '' } as WebhookRecord
  const id = 'evt_0000000000000000000000000b'
  const h = signedHeaders(record, id, Buffer.from(body), now)
  const get = (name: string): string => h[h.indexOf(name) + 1]!
  assert.equal(get('webhook-id'), id)
  assert.equal(get('webhook-timestamp'), String(t))
  assert.equal(get('X-Service-Signature'), signatureHeader([secret, old], body, t))
  for (const s of [secret, old]) {
    assert.equal(verifySignature(body, get('X-Service-Signature'), s, { now }).ok, true)
    assert.equal(verifyWebhook(body, get('X-Service-Signature'), s, { now }).ok, true)
  }
  const std = get('webhook-signature').split(' ')
  assert.deepEqual(std, [new Webhook(secret).sign(id, new Date(now), body), new Webhook(old).sign(id, new Date(now), body)])
  const after = signedHeaders(record, id, Buffer.from(body), now + 60_000)
  assert.equal(after[after.indexOf('webhook-signature') + 1]!.split(' ').length, 1)
  assert.match(after[after.indexOf('X-Service-Signature') + 1]!, /^t=\d+,v1=[0-9a-f]{64}$/)
})
