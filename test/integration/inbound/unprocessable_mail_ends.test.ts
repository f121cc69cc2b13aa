import { test } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import { CONSUMER_INBOUND, STREAM_INBOUND } from '../../../protocol/mod.ts'
import { failingAnalysis } from './failing_analysis_world.ts'

/**
 * Mail that was answered 250 and then cannot be processed however often it is tried (here every analysis answers
 * that the message cannot be analysed) does not end with a log line: after its 10th attempt each route gets an
 * `inbound.received` with the envelope, `processing_error` and `raw`, and the organisation reads the whole message
 * there. The threads load analysis_fails_thread.cts with its `reject` file.
 */
const analysis = failingAnalysis('outbox-unprocessable-')

test('mail that cannot be processed in 10 attempts reaches its route as inbound.received ' +
  'with processing_error and raw', { timeout: 120_000 }, async () => {
  analysis.switchOn('reject')
  const { ob, org, route, events, smtp } = await analysis.start()
  const jsm = await jetstreamManager(ob.proc.nc)

  const info = await smtp.sendMail({ from: 'alice@sender.test', to: `support@${org.domain}`, subject: 'Unreadable', text: 'Hello there' })
  const id = /queued as (msg_[0-9a-z]{26})/.exec(info.response ?? '')?.[1]
  assert.ok(id !== undefined, info.response)

  const [received] = await events.waitFor('inbound.received', 1, 60_000)
  const d = received!.data as Record<string, any>
  assert.equal(d.message_id, id)
  assert.equal(d.route_id, route.id)
  assert.equal(d.from, 'alice@sender.test')
  assert.deepEqual(d.to, [`support@${org.domain}`])
  assert.equal(d.text, '')
  assert.match(d.processing_error, /cannot be analysed/)
  assert.deepEqual(d.raw, { url: `/v1/inbound/messages/${id}/raw`, size: d.raw.size })
  const raw = await ob.request('GET', d.raw.url, { key: org.adminKey })
  assert.equal(raw.status, 200)
  assert.ok(raw.text.includes('Subject: Unreadable'), 'the whole message is kept for the organisation')
  await events.settle()
  assert.equal(events.of('inbound.received').length, 1, 'one event')
  const state = await jsm.consumers.info(STREAM_INBOUND, CONSUMER_INBOUND)
  assert.equal(state.num_pending + state.num_ack_pending, 0, 'the job is done')
})
