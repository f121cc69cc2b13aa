import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { putWebhook, publishEvent } from '../../helpers/webhooks.ts'

// Two slots per endpoint and a 20 s timeout: the dead receiver holds its slots for the whole test.
let ob: TestOutbox
let healthy: HttpsReceiver
let dead: HttpsReceiver
let org: TestOrg
before(async () => {
  healthy = await HttpsReceiver.start()
  dead = await HttpsReceiver.start(() => ({ hang: true }))
  ob = await TestOutbox.start({
    env: {
      OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_ENDPOINT_CONCURRENCY: '2',
      OB_WEBHOOK_TIMEOUT_MS: '20000'
    }
  })
  org = await ob.org()
})
after(async () => { await ob.close(); await healthy.close(); await dead.close() })

test('an endpoint that never answers does not hold back a healthy endpoint of the same events', async () => {
  await putWebhook(ob, org, { url: dead.url('/dead'), events: ['delivered'] })
  await putWebhook(ob, org, { url: healthy.url('/ok'), events: ['delivered'] })
  const ids = new Set<string>()
  for (let i = 0; i < 40; i++) ids.add((await publishEvent(ob, org, 'delivered')).id)
  const got = await healthy.waitFor(40, { path: '/ok' })
  assert.deepEqual(new Set(got.map((r) => JSON.parse(r.rawBody.toString()).id)), ids)
  assert.equal(dead.on('/dead').length, 2, 'the dead endpoint holds exactly its two slots')
})
