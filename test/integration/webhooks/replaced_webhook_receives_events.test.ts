import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstream } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa, type ReceivedRequest } from '../../helpers/https_receiver.ts'
import { eventually } from '../../helpers/waiting.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { verifySignature } from '../../../webhooks/sign.ts'
import { ControlPlane } from '../../../stores/control_plane/mod.ts'
import { eventSubject, newId, randomToken, type EventRecord, type WebhookRecord } from '../../../protocol/mod.ts'

/**
 * A webhook created (or made active again) before an event is published receives that event. Users replace a
 * webhook to change its URL: delete, create, and the very next message's event must reach the new one, even
 * when all of it happens within a moment of the previous event's fan-out.
 */
const ROUNDS = 6
/** Long enough for a delivered event to reach the receiver many times over; a missed event never arrives. */
const ARRIVAL_TIMEOUT_MS = 10_000

let sink: SmtpSink
let rx: HttpsReceiver
let ob: TestOutbox
let org: TestOrg
let sendKey: string
before(async () => {
  sink = await SmtpSink.start({ keepRaw: false })
  rx = await HttpsReceiver.start()
  ob = await TestOutbox.start({
    env: {
      OB_SMTP_RELAY: sink.url, OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '1,1,1'
    }
  })
  org = await ob.org()
  sendKey = await ob.key(org, ['send'])
})
after(async () => { await ob.close(); await rx.close(); await sink.close() })

interface Created { id: string, secret: string, path: string }

async function createWebhook (path: string): Promise<Created> {
  const r = await ob.request('POST', '/v1/webhooks', { key: org.adminKey, body: { url: rx.url(path), events: ['delivered'] } })
  assert.equal(r.status, 201, r.text)
  return { id: r.body.id, secret: r.body.secret, path }
}

async function send (): Promise<string> {
  const r = await ob.request('POST', '/v1/messages/send', {
    key: sendKey,
    body: {
      from: `App <hello@${org.domain}>`, to: 'user@example.net', subject: 'Hello', text: 'Hi', track_opens: false, track_clicks: false
    }
  })
  assert.equal(r.status, 202, r.text)
  return r.body.id as string
}

const messageOf = (r: ReceivedRequest): string =>
  (JSON.parse(r.rawBody.toString('utf8')) as { data: { message_id: string } }).data.message_id

/** The request that brought `messageId`'s delivered event to `wh`: on its path and signed with its secret. */
async function arrival (wh: Created, messageId: string): Promise<ReceivedRequest> {
  const find = (): ReceivedRequest | undefined => rx.on(wh.path).find((r) =>
    messageOf(r) === messageId && verifySignature(r.rawBody, r.headers['x-service-signature'] as string, wh.secret).ok)
  await eventually(() => find() !== undefined, `the delivered event of ${messageId} at webhook ${wh.id} (${wh.path})`, ARRIVAL_TIMEOUT_MS)
  return find()!
}

test('a webhook deleted and created again right after an event was fanned out receives the next message\'s event, ' +
  'round after round', async () => {
  let wh = await createWebhook('/replaced-0')
  let previous = await send()
  for (let round = 1; round <= ROUNDS; round++) {
    await arrival(wh, previous)
    const del = await ob.request('DELETE', `/v1/webhooks/${wh.id}`, { key: org.adminKey })
    assert.equal(del.status, 204)
    // Odd rounds keep the URL (a new secret only), even rounds move to a new one.
    wh = await createWebhook(round % 2 === 1 ? wh.path : `/replaced-${round}`)
    previous = await send()
    await arrival(wh, previous)
    // The next round starts from an event just fanned out, so the replacement follows it at once.
    previous = await send()
  }
  await arrival(wh, previous)
})

test('a webhook paused and made active again receives the event of a message sent right after', async () => {
  const wh = await createWebhook('/revived')
  for (let round = 0; round < ROUNDS; round++) {
    await arrival(wh, await send())
    for (const status of ['paused', 'active']) {
      const r = await ob.request('PATCH', `/v1/webhooks/${wh.id}`, { key: org.adminKey, body: { status } })
      assert.equal(r.status, 200, r.text)
    }
    await arrival(wh, await send())
  }
})

test('a webhook written by another process receives an event published right after the write', async () => {
  // Another process (a second gateway): its own NATS connection and its own view of the control plane.
  const nc: NatsConnection = await connect({ servers: ob.nats.url })
  const cp = await ControlPlane.open(nc, { replicas: 1 })
  try {
    let current: WebhookRecord | undefined
    for (let round = 0; round < ROUNDS; round++) {
      if (current !== undefined) await cp.webhooks.delete(`${org.orgId}.${current.id}`)
      const now = new Date().toISOString()
      current = {
        id: newId('wh'), org_id: org.orgId, url: rx.url('/other-process'), events: ['delivered'],
        secret: `whsec_${randomToken(32)}`, status: 'active', created_at: now, updated_at: now
      }
      await cp.webhooks.put(`${org.orgId}.${current.id}`, current)
      const record: EventRecord = {
        id: newId('evt'), type: 'delivered', timestamp: now, org_id: org.orgId, message_id: `msg_other_${round}`,
        data: { message_id: `msg_other_${round}`, to: 'user@example.net' }
      }
      await jetstream(nc).publish(eventSubject(org.orgId, 'delivered'), JSON.stringify(record), { msgID: record.id })
      await arrival({ id: current.id, secret: current.secret, path: '/other-process' }, `msg_other_${round}`)
    }
  } finally {
    cp.close()
    await nc.close()
  }
})
