import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import { NS_PER_MS, STREAM_MESSAGE_CONTENT } from '../../../protocol/mod.ts'
import { TestOutbox, type TestOrg, type HttpResult } from '../../helpers/outbox.ts'
import { queue } from './fixtures.ts'
import { eventually } from '../../helpers/waiting.ts'

// A new installation keeping message content 7 days (OB_MESSAGE_CONTENT_RETENTION_DAYS=7), while the read model
// keeps messages 30 days: an 8-day-old message is still listed, and its content answers that it is no longer kept.
const DAY_MS = 24 * 3600_000
let ob: TestOutbox
let org: TestOrg
let readKey: string
before(async () => {
  ob = await TestOutbox.start({ env: { OB_MESSAGE_CONTENT_RETENTION_DAYS: '7' } })
  org = await ob.org()
  readKey = await ob.key(org, ['read'])
})
after(async () => { await ob.close() })

test('the stream OB_MESSAGE_CONTENT is created with a max_age of 7 days', async () => {
  const info = await (await jetstreamManager(ob.proc.nc)).streams.info(STREAM_MESSAGE_CONTENT)
  assert.equal(info.config.max_age, 7 * DAY_MS * NS_PER_MS)
})

test('a message sent now has its content; one sent 8 days ago is listed, ' +
  'its content 404 not_found saying content is kept 7 days', async () => {
  const sandboxKey = await ob.key(org, ['send'], 'test')
  const sent = await ob.request('POST', '/v1/messages/send', {
    key: sandboxKey, body: { from: `App <app@${org.domain}>`, to: 'delivered@simulator.test', subject: 'Now', text: 'now' }
  })
  assert.equal(sent.status, 202, sent.text)
  let now: HttpResult | undefined
  await eventually(async () => {
    now = await ob.request('GET', `/v1/messages/${sent.body.id as string}/content`, { key: readKey })
    return now.status === 200
  }, 'content recorded')
  assert.equal(now!.body.text, 'now')

  const old = await queue(ob, org, { created_at: new Date(Date.now() - 8 * DAY_MS).toISOString() })
  assert.equal((await ob.request('GET', `/v1/messages/${old.id}`, { key: readKey })).status, 200, 'the message itself is kept 30 days')
  const r = await ob.request('GET', `/v1/messages/${old.id}/content`, { key: readKey })
  assert.equal(r.status, 404)
  assert.equal(r.body.error.code, 'not_found')
  assert.equal(r.body.error.message, `The content of message ${old.id} is no longer kept: this installation keeps message content 7 days.`)
  assert.deepEqual(r.body.error.details, { reason: 'expired', retention_days: 7 })
})
