// test-group: long-wait — a receiver that answers after 4 s takes its parked events two at a time
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { sleepUntil } from '../../helpers/waiting.ts'
import { putWebhook, publishEvent } from '../../helpers/webhooks.ts'
import { verifySignature } from '../../../webhooks/sign.ts'

// Two slots per endpoint; the slow receiver answers after 4 s, so it is found stalled after a second and the
// events it cannot take are parked in the job stream (naming the event by its OB_EVENTS sequence).
let ob: TestOutbox
let healthy: HttpsReceiver
let slow: HttpsReceiver
let org: TestOrg
before(async () => {
  healthy = await HttpsReceiver.start()
  slow = await HttpsReceiver.start(() => ({ delayMs: 4000 }))
  ob = await TestOutbox.start({
    env: {
      OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_ENDPOINT_CONCURRENCY: '2',
      OB_WEBHOOK_TIMEOUT_MS: '20000'
    }
  })
  org = await ob.org()
})
after(async () => { await ob.close(); await healthy.close(); await slow.close() })

test('events parked for a slow endpoint reach it later, byte for byte as the healthy endpoint got them, each once', async () => {
  const slowHook = await putWebhook(ob, org, { url: slow.url('/slow'), events: ['delivered'] })
  await putWebhook(ob, org, { url: healthy.url('/ok'), events: ['delivered'] })
  const ids = new Set<string>()
  for (let i = 0; i < 4; i++) ids.add((await publishEvent(ob, org, 'delivered', { n: i })).id)
  // the slow endpoint's two slots fill and stay busy past the second after which it counts as stalled
  const [, second] = await slow.waitFor(2, { path: '/slow' })
  await sleepUntil(second!.at + 1500)
  for (let i = 4; i < 8; i++) ids.add((await publishEvent(ob, org, 'delivered', { n: i })).id)
  const direct = await healthy.waitFor(8, { path: '/ok' })
  const late = await slow.waitFor(8, { path: '/slow', timeoutMs: 150_000 })
  const bodyOf = new Map(direct.map((r) => [JSON.parse(r.rawBody.toString()).id as string, r.rawBody.toString()]))
  assert.deepEqual(new Set(late.map((r) => JSON.parse(r.rawBody.toString()).id)), ids)
  assert.equal(late.length, 8, 'each event once')
  for (const r of late) {
    const raw = r.rawBody.toString()
    assert.equal(raw, bodyOf.get(JSON.parse(raw).id), 'a parked event is sent as the exact envelope')
    assert.equal(verifySignature(r.rawBody, r.headers['x-service-signature'] as string, slowHook.secret).ok, true)
  }
})
