import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import {
  CONSUMER_INBOUND, CONSUMER_PROJECTOR, CONSUMER_WEBHOOK_FANOUT, eventSubject, inboundSubject, newId, STREAM_EVENTS, STREAM_INBOUND,
  STREAM_WEBHOOK_JOBS, webhookJobConsumer, webhookJobSubject
} from '../../../protocol/mod.ts'
import { TestOutbox } from '../../helpers/outbox.ts'
import { eventually } from '../../helpers/waiting.ts'
import { putWebhook } from '../../helpers/webhooks.ts'

/**
 * What no Outbox process wrote (a webhook job, an event or an inbound job that cannot be read) is ended at once with
 * a plain `term()`: nats-server 2.9, which the tests run, ignores a termination that carries a reason, and such a
 * message used to come back at every ack wait for ever, logging each time, and stay in its work queue.
 */
let ob: TestOutbox

before(async () => { ob = await TestOutbox.start({ env: { OB_ROLE: 'all', OB_ENGINE_SHARDS: '1' } }) })
after(async () => { await ob.close() })

test('an unreadable webhook job, event and inbound job each end at once: nothing stays pending or stored', async () => {
  const js = jetstream(ob.proc.nc)
  const jsm = await jetstreamManager(ob.proc.nc)
  await js.publish(webhookJobSubject(0, newId('wh')), 'not a job', { msgID: newId('msg') })
  await js.publish(eventSubject(newId('org'), 'delivered'), '[1]', { msgID: newId('msg') })
  await js.publish(inboundSubject(0), 'not a job', { msgID: newId('msg') })
  const settled = async (stream: string, consumer: string): Promise<boolean> => {
    const info = await jsm.consumers.info(stream, consumer)
    return info.num_pending === 0 && info.num_ack_pending === 0 && info.delivered.stream_seq > 0
  }
  for (const [stream, consumer] of [[STREAM_WEBHOOK_JOBS, webhookJobConsumer(0)], [STREAM_EVENTS, CONSUMER_PROJECTOR],
    [STREAM_EVENTS, CONSUMER_WEBHOOK_FANOUT], [STREAM_INBOUND, CONSUMER_INBOUND]] as const) {
    await eventually(async () => await settled(stream, consumer), `${consumer} ended the unreadable message`, 20_000)
  }
  assert.equal((await jsm.streams.info(STREAM_WEBHOOK_JOBS)).state.messages, 0, 'the job left its work queue')
  assert.equal((await jsm.streams.info(STREAM_INBOUND)).state.messages, 0, 'the inbound job left its work queue')
})

test('a parked webhook job naming an event whose stored bytes are not an event ends at once, unsent, ' +
  'instead of being read again every few seconds', async () => {
  const js = jetstream(ob.proc.nc)
  const jsm = await jetstreamManager(ob.proc.nc)
  const org = await ob.org()
  const webhook = await putWebhook(ob, org, { url: 'https://hooks.example.com/outbox', events: ['delivered'] })
  // what OB_EVENTS stores at the job's sequence does not parse; the fan-out ends it, but the job still names it
  const ack = await js.publish(eventSubject(org.orgId, 'delivered'), '{"id": "evt_', { msgID: newId('msg') })
  const now = Date.now()
  const ref = {
    event_seq: ack.seq, event_id: newId('evt'), org_id: org.orgId, webhook_id: webhook.id, attempt: 1, due_at: now, created_at: now
  }
  const before = (await jsm.consumers.info(STREAM_WEBHOOK_JOBS, webhookJobConsumer(0))).delivered.stream_seq
  await js.publish(webhookJobSubject(0, webhook.id), JSON.stringify(ref), { msgID: newId('msg') })
  await eventually(async () => {
    const info = await jsm.consumers.info(STREAM_WEBHOOK_JOBS, webhookJobConsumer(0))
    return info.num_pending === 0 && info.num_ack_pending === 0 && info.delivered.stream_seq > before
  }, 'the job ended', 15_000)
  assert.equal((await jsm.streams.info(STREAM_WEBHOOK_JOBS)).state.messages, 0, 'the job left its work queue')
  assert.equal(ob.proc.metrics.webhookJobsDropped.event_missing.value, 1, 'counted as dropped')
})
