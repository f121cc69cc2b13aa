import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { putWebhook, publishEvent, setWebhookStatus, webhookNow } from '../../helpers/webhooks.ts'
import { PAUSED_RECHECK_MS } from '../../../webhooks/job_eligibility.ts'

/**
 * Pausing a webhook keeps what it already owed: a retry of an event published before the pause that falls due while
 * it is paused is delivered once it is active again, and the schedule goes on from there; an event that occurs
 * while it is paused is not delivered later.
 */
let ob: TestOutbox
let rx: HttpsReceiver
let org: TestOrg
let key: string
before(async () => {
  rx = await HttpsReceiver.start()
  ob = await TestOutbox.start({
    env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '2,2,2' }
  })
  org = await ob.org()
  key = await ob.key(org, ['manage'])
})
after(async () => { await ob.close(); await rx.close() })

test('a retry that falls due while the webhook is paused is delivered once it is active again; events of the pause are not', async () => {
  // the first attempt fails; every later one succeeds
  rx.script = (r) => ({ status: r.path === '/paused' && rx.on('/paused').length <= 1 ? 500 : 200 })
  const wh = await putWebhook(ob, org, { url: rx.url('/paused'), events: ['delivered'] })
  const owed = await publishEvent(ob, org, 'delivered')
  await rx.waitFor(1, { path: '/paused' })
  await setWebhookStatus(ob, wh, 'paused')
  await eventually(() => webhookNow(ob, wh)?.status === 'paused', 'the engine sees the pause')
  const during = await publishEvent(ob, org, 'delivered')
  await nothingHappensFor(5000) // the retry falls due (2 s) and waits: were it sent, it would be here by now
  assert.equal(rx.on('/paused').length, 1, 'nothing reaches a paused webhook')
  await setWebhookStatus(ob, wh, 'active')
  const reqs = await rx.waitFor(2, { path: '/paused', timeoutMs: PAUSED_RECHECK_MS * 1.5 + 15_000 })
  assert.equal(JSON.parse(reqs[1]!.rawBody.toString()).id, owed.id)
  await nothingHappensFor(3000) // the event of the pause, or the owed one again, would be here by now
  assert.equal(rx.on('/paused').length, 2, 'the event of the pause is not delivered later, the owed one once')
  assert.ok(!rx.on('/paused').some((r) => JSON.parse(r.rawBody.toString()).id === during.id))
  const page = await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key })
  assert.deepEqual(page.body.data.map((d: any) => [d.attempt, d.status_code]), [[2, 200], [1, 500]],
    'the retry kept its place in the schedule')
  assert.equal(webhookNow(ob, wh)?.status, 'active')
})
