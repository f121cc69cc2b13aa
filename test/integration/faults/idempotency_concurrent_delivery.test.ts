import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import type { ServerProcess } from '../../helpers/servers.ts'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { STREAM_OUTBOUND } from '../../../protocol/mod.ts'
import {
  messageIdHeader, nothingPending, sendBody, sleep, untilDelivered, untilNothingPending, startRelayWorld, type RelayWorld
} from './fault_env.ts'

// test/integration/send/send_idempotency.test.ts checks the stream with only a gateway running; this one runs the
// engine too and counts at the SMTP sink.
let nats: ServerProcess
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let key: string

let world: RelayWorld
before(async () => { ({ nats, sink, ob, org, key } = world = await startRelayWorld()) })
after(async () => { await world.close() })

test('50 concurrent sends with one Idempotency-Key: one message in the stream and at the sink, the rest replayed or 409', async () => {
  const jsm = await jetstreamManager(ob.proc.nc)
  const seqBefore = (await jsm.streams.info(STREAM_OUTBOUND)).state.last_seq
  const raw = JSON.stringify(sendBody(org, 'once@dest.example'))
  const headers = { 'content-type': 'application/json', 'idempotency-key': 'concurrent-delivery-1' }
  const results = await Promise.all(Array.from({ length: 50 }, async () => await ob.request('POST', '/v1/messages/send', {
    key, rawBody: raw, headers
  })))
  const statuses = results.map((r) => r.status)
  assert.ok(statuses.every((s) => s === 202 || s === 409), JSON.stringify(statuses))
  const accepted = results.filter((r) => r.status === 202)
  const fresh = accepted.filter((r) => r.headers.get('idempotent-replayed') === null)
  assert.equal(fresh.length, 1, 'exactly one request did the work')
  for (const r of accepted) if (r !== fresh[0]) assert.equal(r.headers.get('idempotent-replayed'), 'true')
  for (const r of accepted) assert.equal(r.text, fresh[0]!.text, 'a replay is the first response, byte for byte')
  const id = fresh[0]!.body.id as string

  assert.equal((await jsm.streams.info(STREAM_OUTBOUND)).state.last_seq, seqBefore + 1, 'one message stored')
  await untilDelivered(sink, org, [id])
  const again = await ob.request('POST', '/v1/messages/send', { key, rawBody: raw, headers })
  assert.equal(again.status, 202)
  assert.equal(again.headers.get('idempotent-replayed'), 'true')
  await sleep(500)
  assert.equal(sink.messages.filter((m) => m.messageId === messageIdHeader(org, id)).length, 1, 'one SMTP transaction')
  assert.equal(sink.messages.length, 1)
  const state = await untilNothingPending(nats.url)
  assert.ok(nothingPending(state), JSON.stringify(state))
})
