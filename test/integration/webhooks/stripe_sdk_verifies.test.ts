import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import Stripe from 'stripe'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa, type ReceivedRequest } from '../../helpers/https_receiver.ts'
import { publishEvent } from '../../helpers/webhooks.ts'

/**
 * X-Service-Signature is in Stripe's format, so a receiver that verifies with Stripe's own SDK accepts Outbox's
 * requests, including the two signatures of a secret rotation's grace period. The SDK reads the header that
 * Stripe names Stripe-Signature; the receiver passes it the value of X-Service-Signature.
 */
const stripe = new Stripe('sk_test_never_used')

let ob: TestOutbox
let rx: HttpsReceiver
let org: TestOrg
let key: string
/** The secrets the receiver tries on each request, and what the SDK said with each: the event id, or why it refused. */
let receiverSecrets: string[] = []
const verdicts = new Map<ReceivedRequest, Record<string, string>>()

function constructEvent (rawBody: Buffer, header: string, secret: string): string {
  try {
    return stripe.webhooks.constructEvent(rawBody, header, secret).id
  } catch (err) {
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) return 'refused'
    throw err
  }
}

before(async () => {
  rx = await HttpsReceiver.start((req) => {
    const header = req.headers['x-service-signature'] as string
    const said = Object.fromEntries(receiverSecrets.map((s) => [s, constructEvent(req.rawBody, header, s)]))
    verdicts.set(req, said)
    return { status: Object.values(said).some((v) => v !== 'refused') ? 200 : 400 }
  })
  ob = await TestOutbox.start({
    env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '1,1,1' }
  })
  org = await ob.org()
  key = await ob.key(org, ['manage'])
})
after(async () => { await ob.close(); await rx.close() })

async function rotate (id: string, graceMinutes: number): Promise<string> {
  const r = await ob.request('POST', `/v1/webhooks/${id}/rotate-secret`, { key, body: { grace_period_minutes: graceMinutes } })
  assert.equal(r.status, 200)
  return r.body.secret
}

test('stripe.webhooks.constructEvent verifies X-Service-Signature with the new and the old secret during a rotation, ' +
  'and only the new one after it', async () => {
  const created = await ob.request('POST', '/v1/webhooks', { key, body: { url: rx.url('/stripe'), events: ['delivered'] } })
  assert.equal(created.status, 201)
  const first: string = created.body.secret

  // Before any rotation: one signature, which the SDK accepts with the secret as returned.
  receiverSecrets = [first]
  const evt0 = await publishEvent(ob, org, 'delivered')
  const [req0] = await rx.waitFor(1, { path: '/stripe' })
  assert.deepEqual(verdicts.get(req0!), { [first]: evt0.id })

  // During the grace period: the receiver accepts the request whichever of the two secrets it holds.
  const second = await rotate(created.body.id, 60)
  receiverSecrets = [second, first]
  const evt1 = await publishEvent(ob, org, 'delivered')
  const [, req1] = await rx.waitFor(2, { path: '/stripe' })
  assert.deepEqual(verdicts.get(req1!), { [second]: evt1.id, [first]: evt1.id })
  assert.match(req1!.headers['x-service-signature'] as string, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/)

  // A body changed by one byte is refused with either secret, and so is the request received over 300 s after t.
  const header1 = req1!.headers['x-service-signature'] as string
  const tampered = Buffer.from(req1!.rawBody)
  tampered[tampered.length - 2] = tampered[tampered.length - 2]! ^ 1
  const t = Number(/^t=(\d+),/.exec(header1)![1])
  for (const secret of [second, first]) {
    assert.throws(() => stripe.webhooks.constructEvent(tampered, header1, secret), Stripe.errors.StripeSignatureVerificationError)
    assert.equal(stripe.webhooks.constructEvent(req1!.rawBody, header1, secret, undefined, undefined, (t + 300) * 1000).id, evt1.id)
    assert.throws(() => stripe.webhooks.constructEvent(req1!.rawBody, header1, secret, undefined, undefined, (t + 301) * 1000), /tolerance/)
  }

  // Grace 0 ends the previous secret at once: only the newest one verifies; both older ones are refused.
  const third = await rotate(created.body.id, 0)
  receiverSecrets = [third, second, first]
  const evt2 = await publishEvent(ob, org, 'delivered')
  const [, , req2] = await rx.waitFor(3, { path: '/stripe' })
  assert.match(req2!.headers['x-service-signature'] as string, /^t=\d+,v1=[0-9a-f]{64}$/)
  assert.deepEqual(verdicts.get(req2!), { [third]: evt2.id, [second]: 'refused', [first]: 'refused' })
})
