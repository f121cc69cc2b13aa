import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import { NS_PER_MS, STREAM_MESSAGE_CONTENT, STREAM_OUTBOUND } from '../../../protocol/mod.ts'
import { startSubmissionScenario, type SubmissionScenario } from '../../helpers/submission.ts'
import { eventually } from '../../helpers/waiting.ts'

// An installation that records no message content (OB_MESSAGE_CONTENT_RETENTION_DAYS=0): mail is sent and
// delivered as ever, the content route says why there is nothing, and the engine published nothing for it.
let s: SubmissionScenario
before(async () => { s = await startSubmissionScenario({ OB_MESSAGE_CONTENT_RETENTION_DAYS: '0' }) })
after(async () => { await s.close() })

test('a sent and delivered message has no content: 404 not_found saying it is not recorded here, ' +
  'and OB_MESSAGE_CONTENT holds nothing', async () => {
  const sent = await s.ob.request('POST', '/v1/messages/send', {
    key: await s.ob.key(s.org, ['send']),
    body: { from: `App <app@${s.org.domain}>`, to: 'ann@dest.example', subject: 'Your receipt', html: '<p>Thanks</p>', text: 'Thanks' }
  })
  assert.equal(sent.status, 202, sent.text)
  const id = sent.body.id as string
  const readKey = await s.ob.key(s.org, ['read'])
  await eventually(() => s.sink.to('ann@dest.example').length === 1, 'delivered to the sink')
  await eventually(async () => (await s.ob.request('GET', `/v1/messages/${id}`, { key: readKey })).body?.status === 'delivered',
    'delivered in the read model')
  // the engine acknowledges a message only once its content is recorded (or failed to be), so from here on
  // anything it recorded would be in the stream
  const jsm = await jetstreamManager(s.ob.proc.nc)
  await eventually(async () => (await jsm.streams.info(STREAM_OUTBOUND)).state.messages === 0, 'the message acknowledged')

  const r = await s.ob.request('GET', `/v1/messages/${id}/content`, { key: readKey })
  assert.equal(r.status, 404)
  assert.deepEqual(r.body.error, {
    code: 'not_found',
    message: 'Message content is not recorded on this installation (OB_MESSAGE_CONTENT_RETENTION_DAYS is 0).',
    details: { reason: 'recording_off', retention_days: 0 },
    request_id: r.body.error.request_id
  })

  const content = await jsm.streams.info(STREAM_MESSAGE_CONTENT)
  assert.equal(content.state.messages, 0, 'nothing was published to OB_MESSAGE_CONTENT')
  assert.equal(content.state.last_seq, 0, 'not even something since removed')
  // the stream stays; what an earlier setting recorded would be gone within two minutes
  assert.equal(content.config.max_age, 2 * 60_000 * NS_PER_MS)
})
