import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import { NS_PER_MS, STREAM_MESSAGE_CONTENT } from '../../../protocol/mod.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox } from '../../helpers/outbox.ts'
import { eventually } from '../../helpers/waiting.ts'

// An installation that kept message content 30 days (the default) is restarted with
// OB_MESSAGE_CONTENT_RETENTION_DAYS=7: the start brings the existing stream to 7 days, keeping what is younger.
const DAY_MS = 24 * 3600_000
const servers: ServerProcess[] = []
let ob: TestOutbox | undefined
after(async () => {
  await ob?.close()
  for (const s of servers) await s.dispose()
})

test('restarted with 7 days, the existing OB_MESSAGE_CONTENT stream has a max_age of 7 days and keeps the content it had', async () => {
  const nats = await ServerProcess.nats()
  const redis = await ServerProcess.redis()
  servers.push(nats, redis)
  ob = await TestOutbox.start({ nats, redis })
  const maxAge = async (): Promise<number> =>
    (await (await jetstreamManager(ob!.proc.nc)).streams.info(STREAM_MESSAGE_CONTENT)).config.max_age
  assert.equal(await maxAge(), 30 * DAY_MS * NS_PER_MS)
  const org = await ob.org()
  const readKey = await ob.key(org, ['read'])
  const sent = await ob.request('POST', '/v1/messages/send', {
    key: await ob.key(org, ['send'], 'test'),
    body: { from: `App <app@${org.domain}>`, to: 'delivered@simulator.test', subject: 'Before', text: 'before the restart' }
  })
  assert.equal(sent.status, 202, sent.text)
  const id = sent.body.id as string
  await eventually(async () => (await ob!.request('GET', `/v1/messages/${id}/content`, { key: readKey })).status === 200,
    'content recorded')
  await ob.close()

  ob = await TestOutbox.start({ nats, redis, env: { OB_MESSAGE_CONTENT_RETENTION_DAYS: '7' } })
  assert.equal(await maxAge(), 7 * DAY_MS * NS_PER_MS)
  const r = await ob.request('GET', `/v1/messages/${id}/content`, { key: readKey })
  assert.equal(r.status, 200, r.text)
  assert.equal(r.body.text, 'before the restart')
})
