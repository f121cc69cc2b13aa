import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { putWebhook, publishEvent, sleep } from '../../helpers/webhooks.ts'
import { sleepUntil } from '../../helpers/waiting.ts'

let nats: ServerProcess
let redis: ServerProcess
let rx: HttpsReceiver
const env = { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '8' }
// the retry falls due 8 s after the first attempt: long enough that stopping the first process (slow on a loaded
// machine) always ends before it, short enough to wait for
const RETRY_AFTER_MS = 8000
before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  rx = await HttpsReceiver.start()
  rx.statuses(500, 200)
})
after(async () => { await rx.close(); await nats.dispose(); await redis.dispose() })

test('a retry pending while the process is stopped is sent by the next process on the same NATS', async () => {
  const first = await TestOutbox.start({ nats, redis, env })
  let org: TestOrg
  let evtId: string
  let firstAttemptAt: number
  try {
    org = await first.org()
    await putWebhook(first, org, { url: rx.url('/durable'), events: ['delivered'] })
    evtId = (await publishEvent(first, org, 'delivered')).id
    await rx.waitFor(1, { path: '/durable' })
    firstAttemptAt = Date.now()
    await sleep(200) // the retry job is published before the first attempt is acknowledged
  } finally {
    await first.close()
  }
  assert.equal(rx.on('/durable').length, 1, 'the retry is not sent before the process stops')
  await sleepUntil(firstAttemptAt + RETRY_AFTER_MS + 500) // the retry falls due while no process runs
  assert.equal(rx.on('/durable').length, 1, 'nothing is sent while no engine runs')
  const second = await TestOutbox.start({ nats, redis, env })
  try {
    const reqs = await rx.waitFor(2, { path: '/durable', timeoutMs: 15_000 })
    assert.equal(JSON.parse(reqs[1]!.rawBody.toString()).id, evtId, 'the retry keeps the event id')
    assert.equal(second.proc.cp.webhooks.list(`${org.orgId}.`)[0]?.status, 'active')
  } finally {
    await second.close()
  }
})
