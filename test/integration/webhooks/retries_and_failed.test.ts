import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { putWebhook, publishEvent, setWebhookStatus, webhookNow } from '../../helpers/webhooks.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'

// Schedule 1,1,1: attempt 1 immediately, then three retries about a second apart (±10 % jitter).
let ob: TestOutbox
let rx: HttpsReceiver
let org: TestOrg
let key: string
before(async () => {
  rx = await HttpsReceiver.start()
  rx.script = (r) => r.path.startsWith('/down')
    ? { status: 503 }
    : r.path.startsWith('/flaky') ? { status: rx.on(r.path).length <= 2 ? 500 : 204 } : { status: 200 }
  ob = await TestOutbox.start({
    env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '1,1,1' }
  })
  org = await ob.org()
  key = await ob.key(org, ['manage'])
})
after(async () => { await ob.close(); await rx.close() })

test('non-2xx answers are retried with the same event id until a 2xx', async () => {
  const wh = await putWebhook(ob, org, { url: rx.url('/flaky'), events: ['delivered'] })
  const evt = await publishEvent(ob, org, 'delivered')
  const reqs = await rx.waitFor(3, { path: '/flaky' })
  for (const r of reqs) assert.equal(JSON.parse(r.rawBody.toString()).id, evt.id)
  assert.ok(reqs[1]!.at - reqs[0]!.at >= 800, 'the first retry waits for the schedule')
  await nothingHappensFor(1500) // a retry after the 2xx would be due by now
  assert.equal(rx.on('/flaky').length, 3, 'no attempt after the 2xx')
  assert.equal(webhookNow(ob, wh)?.status, 'active')
  const page = await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key })
  assert.equal(page.status, 200)
  assert.deepEqual(page.body.data.map((d: any) => [d.attempt, d.status_code, d.error]),
    [[3, 204, null], [2, 500, 'http_500'], [1, 500, 'http_500']])
  // what was sent is kept for the attempts that failed (the event itself for the one that succeeded), what came back for each
  const sentId = (d: any): string | null => d.request_body === null ? null : JSON.parse(d.request_body).id
  assert.deepEqual(page.body.data.map((d: any) => [d.test, sentId(d), d.response_body]),
    [[false, null, ''], [false, evt.id, 'ok'], [false, evt.id, 'ok']])
})

test('after the last retry the webhook is failed, gets nothing more, and is revived by status active', async () => {
  const wh = await putWebhook(ob, org, { url: rx.url('/down'), events: ['bounced'] })
  const evt = await publishEvent(ob, org, 'bounced')
  const reqs = await rx.waitFor(4, { path: '/down', timeoutMs: 15_000 })
  assert.deepEqual(new Set(reqs.map((r) => JSON.parse(r.rawBody.toString()).id)), new Set([evt.id]))
  await eventually(() => webhookNow(ob, wh)?.status === 'failed', 'webhook marked failed')
  assert.equal(rx.on('/down').length, 4, 'one attempt plus three retries')

  await publishEvent(ob, org, 'bounced')
  await nothingHappensFor(1500) // a delivery to the failed webhook would be here by now
  assert.equal(rx.on('/down').length, 4, 'a failed webhook receives nothing')

  const log = await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key })
  assert.deepEqual(log.body.data.map((d: any) => d.attempt), [4, 3, 2, 1])
  for (const d of log.body.data) {
    assert.equal(d.status_code, 503)
    assert.equal(d.error, 'http_503')
    assert.equal(d.event_id, evt.id)
    assert.equal(d.event_type, 'bounced')
    assert.ok(Number.isInteger(d.duration_ms) && d.duration_ms >= 0)
    assert.match(d.id, /^whd_[0-9a-z]{26}$/)
  }

  // PATCH status active, as the API does it: the KV record is written back.
  rx.script = () => ({ status: 200 })
  await setWebhookStatus(ob, wh, 'active')
  const revived = await publishEvent(ob, org, 'bounced')
  const after = await rx.waitFor(5, { path: '/down' })
  assert.equal(JSON.parse(after[4]!.rawBody.toString()).id, revived.id, 'only the new event, not the one sent while failed')
  await nothingHappensFor(1200) // the event sent while failed, were it delivered, would be here by now
  assert.equal(rx.on('/down').length, 5)
})

test('a paused webhook receives nothing, and nothing later when it is active again', async () => {
  const wh = await putWebhook(ob, org, { url: rx.url('/paused'), events: ['opened'] })
  await setWebhookStatus(ob, wh, 'paused')
  await publishEvent(ob, org, 'opened')
  await nothingHappensFor(800) // a delivery to the paused webhook would be here by now
  assert.equal(rx.on('/paused').length, 0)
  await setWebhookStatus(ob, wh, 'active')
  const after = await publishEvent(ob, org, 'opened')
  const reqs = await rx.waitFor(1, { path: '/paused' })
  await nothingHappensFor(800) // the event sent while paused, were it delivered, would be here by now
  assert.equal(rx.on('/paused').length, 1)
  assert.equal(JSON.parse(reqs[0]!.rawBody.toString()).id, after.id)
})

test('a deleted webhook receives nothing, including retries already queued, each counted as dropped', async () => {
  rx.script = (r) => ({ status: r.path === '/deleted' ? 500 : 200 })
  const dropped = ob.proc.metrics.webhookJobsDropped.webhook_deleted
  const droppedBefore = dropped.value
  const wh = await putWebhook(ob, org, { url: rx.url('/deleted'), events: ['clicked'] })
  await publishEvent(ob, org, 'clicked')
  await rx.waitFor(1, { path: '/deleted' })
  await ob.proc.cp.webhooks.delete(`${wh.org_id}.${wh.id}`)
  await publishEvent(ob, org, 'clicked')
  await nothingHappensFor(2000) // a retry (1 s) or the new event would be here by now
  assert.equal(rx.on('/deleted').length, 1)
  assert.equal(dropped.value - droppedBefore, 1, 'the queued retry ended as dropped (the new event made no job)')
})
