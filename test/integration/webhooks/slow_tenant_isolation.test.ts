import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { putWebhook, publishEvent } from '../../helpers/webhooks.ts'

// One receiver for two organisations (an integration hub): organisation A's path is held by the test, so A's
// requests take as long as the test wants; B's path answers at once. Two slots per endpoint, and a timeout far
// longer than the test, so A's requests stay in flight until they are let go.
const SLOTS = 2
let ob: TestOutbox
let hub: HttpsReceiver
let orgA: TestOrg
let orgB: TestOrg
let letGo!: () => void
const held = new Promise<void>((resolve) => { letGo = resolve })

before(async () => {
  hub = await HttpsReceiver.start((req) => req.path === '/a' ? { until: held } : { status: 200 })
  ob = await TestOutbox.start({
    env: {
      OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_ENDPOINT_CONCURRENCY: String(SLOTS),
      OB_WEBHOOK_TIMEOUT_MS: '120000'
    }
  })
  orgA = await ob.org()
  orgB = await ob.org()
})
after(async () => { letGo(); await ob.close(); await hub.close() })

test('a slow receiver of one organisation does not hold back another organisation\'s events to the same origin', async () => {
  await putWebhook(ob, orgA, { url: hub.url('/a'), events: ['delivered'] })
  await putWebhook(ob, orgB, { url: hub.url('/b'), events: ['delivered'] })
  for (let i = 0; i < 3 * SLOTS; i++) await publishEvent(ob, orgA, 'delivered')
  await hub.waitFor(SLOTS, { path: '/a', timeoutMs: 30_000 })
  const ids = new Set<string>()
  for (let i = 0; i < 10; i++) ids.add((await publishEvent(ob, orgB, 'delivered')).id)
  // B's events arrive while every request of A is still unanswered; the wait only bounds the test when they do not
  await hub.waitFor(ids.size, { path: '/b', timeoutMs: 30_000 }).catch(() => {})
  const beforeAnyAnswerToA = hub.on('/b').map((r) => JSON.parse(r.rawBody.toString()).id as string)
  const aInFlight = hub.on('/a').length
  letGo()
  assert.deepEqual(new Set(beforeAnyAnswerToA), ids, 'all of B\'s events were answered before A\'s first answer')
  assert.equal(aInFlight, SLOTS, 'A\'s slow receiver held only its own slots')
})
