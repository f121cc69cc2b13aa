import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { eventually } from '../../helpers/waiting.ts'
import { publishEvent } from '../../helpers/webhooks.ts'
import { newId, randomToken, type WebhookRecord } from '../../../protocol/mod.ts'

/**
 * An attempt that throws instead of settling (here: a webhook record damaged in the control plane, with no
 * secret to sign with) is logged with the webhook's id and without any secret, and its job is not held
 * forever: once the record is repaired, the event is delivered.
 */
let ob: TestOutbox
let rx: HttpsReceiver
let org: TestOrg
const logs: string[] = []
before(async () => {
  rx = await HttpsReceiver.start()
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  ob = await TestOutbox.start({
    env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '1,1,1' },
    log: { level: 'warn', stream }
  })
  org = await ob.org()
})
after(async () => { await ob.close(); await rx.close() })

test('an attempt that throws is logged with the webhook id and no secret, and is made again once it can succeed', async () => {
  const now = new Date().toISOString()
  const whole: WebhookRecord = {
    id: newId('wh'), org_id: org.orgId, url: rx.url('/damaged'), events: ['delivered'],
    secret: `whsec_${randomToken(32)}`, status: 'active', created_at: now, updated_at: now
  }
  const key = `${org.orgId}.${whole.id}`
  const { secret: _secret, ...damaged } = whole
  await ob.proc.cp.webhooks.put(key, damaged as WebhookRecord)
  const evt = await publishEvent(ob, org, 'delivered')

  const faults = (): Array<Record<string, unknown>> => logs.map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'webhook attempt failed unexpectedly; it will be made again')
  await eventually(() => faults().length > 0, 'the failed attempt is logged')
  const line = faults()[0]!
  assert.equal(line.webhook_id, whole.id)
  assert.equal(line.event_id, evt.id)
  assert.equal(line.level, 50, 'logged as an error')
  assert.equal(typeof (line.err as { message?: unknown })?.message, 'string', 'the cause is logged')
  assert.equal(rx.on('/damaged').length, 0)

  await ob.proc.cp.webhooks.put(key, whole)
  const [req] = await rx.waitFor(1, { path: '/damaged', timeoutMs: 20_000 })
  assert.equal(JSON.parse(req!.rawBody.toString('utf8')).id, evt.id)
  assert.equal(logs.some((l) => l.includes(whole.secret)), false, 'no log line carries the secret')
})
