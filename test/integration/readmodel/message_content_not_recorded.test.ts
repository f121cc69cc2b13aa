import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import { body, sendKey, startGateway } from '../send/helpers.ts'
import { eventually } from '../../helpers/waiting.ts'

// Only the gateway runs: the message is recorded after its 202, its content (recorded by the engine) is not.
let ob: TestOutbox
let org: TestOrg
before(async () => {
  ob = await startGateway()
  org = await ob.org()
})
after(async () => { await ob.close() })

test('until the engine has taken the message up, its content is 404 not_found saying it is not recorded yet', async () => {
  const sent = await ob.request('POST', '/v1/messages/send', { key: await sendKey(ob, org), body: body(org) })
  assert.equal(sent.status, 202, sent.text)
  const readKey = await ob.key(org, ['read'])
  const id = sent.body.id as string
  const record = await eventually(async () => {
    const r = await ob.request('GET', `/v1/messages/${id}`, { key: readKey })
    return r.status === 200 ? r : undefined
  }, 'the message recorded')
  assert.equal(record.status, 200)
  const r = await ob.request('GET', `/v1/messages/${id}/content`, { key: readKey })
  assert.equal(r.status, 404)
  assert.equal(r.body.error.code, 'not_found')
  assert.match(r.body.error.message, /not recorded yet/)
  assert.deepEqual(r.body.error.details, { reason: 'not_yet_recorded', retention_days: 30 }, 'a reason to ask again')
  const sendOnly = await ob.request('GET', `/v1/messages/${id}/content`, { key: await sendKey(ob, org) })
  assert.equal(sendOnly.status, 403, 'the read permission is needed')
})
