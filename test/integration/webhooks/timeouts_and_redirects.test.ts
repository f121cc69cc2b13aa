import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { putWebhook, publishEvent, sleep } from '../../helpers/webhooks.ts'
import { eventually } from '../../helpers/waiting.ts'

// The 30 s request timeout is shortened to 1 s here; OB_WEBHOOK_RETRY_SCHEDULE=1 gives two attempts.
let ob: TestOutbox
let rx: HttpsReceiver
let org: TestOrg
let key: string
before(async () => {
  rx = await HttpsReceiver.start((r) => {
    if (r.path === '/slow') return { status: 200, delayMs: 2500 }
    if (r.path === '/silent') return { hang: true }
    if (r.path === '/redirect') return { status: 302, headers: { location: rx.url('/target') } }
    if (r.path === '/created') return { status: 201 }
    if (r.path === '/not-found') return { status: 404 }
    return { status: 200 }
  })
  ob = await TestOutbox.start({
    env: {
      OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '1', OB_WEBHOOK_TIMEOUT_MS: '1000'
    }
  })
  org = await ob.org()
  key = await ob.key(org, ['manage'])
})
after(async () => { await ob.close(); await rx.close() })

async function attempts (whId: string, n: number): Promise<any[]> {
  await eventually(async () => (await ob.request('GET', `/v1/webhooks/${whId}/deliveries`, { key })).body.data.length >= n,
    `${n} attempts logged`, 15_000)
  return (await ob.request('GET', `/v1/webhooks/${whId}/deliveries`, { key })).body.data
}

test('a receiver slower than the timeout, and one that never answers, fail with timeout', async () => {
  const slow = await putWebhook(ob, org, { url: rx.url('/slow'), events: ['delivered'] })
  const silent = await putWebhook(ob, org, { url: rx.url('/silent'), events: ['delivered'] })
  await publishEvent(ob, org, 'delivered')
  for (const wh of [slow, silent]) {
    const log = await attempts(wh.id, 2)
    assert.deepEqual(log.map((d) => [d.attempt, d.status_code, d.error]), [[2, null, 'timeout'], [1, null, 'timeout']])
    assert.ok(log.every((d) => d.duration_ms >= 900), 'the attempt lasted until the timeout')
  }
})

test('redirects are not followed and count as failures; any 2xx is success; 4xx is retried too', async () => {
  const redirect = await putWebhook(ob, org, { url: rx.url('/redirect'), events: ['opened'] })
  const created = await putWebhook(ob, org, { url: rx.url('/created'), events: ['opened'] })
  const notFound = await putWebhook(ob, org, { url: rx.url('/not-found'), events: ['opened'] })
  await publishEvent(ob, org, 'opened')
  assert.deepEqual((await attempts(redirect.id, 2)).map((d) => [d.status_code, d.error]), [[302, 'http_302'], [302, 'http_302']])
  assert.deepEqual((await attempts(notFound.id, 2)).map((d) => [d.status_code, d.error]), [[404, 'http_404'], [404, 'http_404']])
  assert.deepEqual((await attempts(created.id, 1)).map((d) => [d.status_code, d.error]), [[201, null]])
  await sleep(300)
  assert.equal(rx.on('/target').length, 0, 'the Location was never requested')
  assert.equal(rx.on('/created').length, 1)
})

test('an endpoint that refuses connections fails with connection_refused', async () => {
  const closed = await HttpsReceiver.start()
  const port = closed.port
  await closed.close()
  const wh = await putWebhook(ob, org, { url: `https://127.0.0.1:${port}/gone`, events: ['clicked'] })
  await publishEvent(ob, org, 'clicked')
  const log = await attempts(wh.id, 2)
  assert.deepEqual(log.map((d) => [d.status_code, d.error]), [[null, 'connection_refused'], [null, 'connection_refused']])
})
