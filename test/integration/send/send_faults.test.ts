import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager, DiscardPolicy } from '@nats-io/jetstream'
import { STREAM_OUTBOUND } from '../../../protocol/mod.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import { startGateway, outboundOf, sendKey, body } from './helpers.ts'
import { eventually } from '../../helpers/waiting.ts'

let nats: ServerProcess
let redis: ServerProcess
let ob: TestOutbox
let org: TestOrg
let key: string
before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  ob = await startGateway({ OB_PUBLISH_TIMEOUT_MS: '1000' }, { nats, redis })
  org = await ob.org('pro')
  key = await sendKey(ob, org)
})
after(async () => {
  await ob.close()
  await nats.dispose()
  await redis.dispose()
})

test('NATS down: 503 service_unavailable with Retry-After, not a hang; the Idempotency-Key stays usable', { timeout: 20_000 }, async () => {
  const b = body(org, { to: 'outage@example.net' })
  const headers = { 'content-type': 'application/json', 'idempotency-key': 'outage-1' }
  await nats.stop()
  try {
    const r = await ob.request('POST', '/v1/messages/send', { key, rawBody: JSON.stringify(b), headers })
    assert.equal(r.status, 503, r.text)
    assert.equal(r.body.error.code, 'service_unavailable')
    assert.equal(r.headers.get('retry-after'), '1')
  } finally {
    await nats.start()
  }
  // Once the client has reconnected, the same request with the same key goes through.
  const ok = await eventually(async () => {
    const r = await ob.request('POST', '/v1/messages/send', { key, rawBody: JSON.stringify(b), headers })
    return r.status === 202 ? r : undefined
  }, 'the same request to go through', 10_000, 200)
  assert.equal(ok.status, 202, ok.text)
  assert.equal(ok.headers.get('idempotent-replayed'), null)
  const stored = (await outboundOf(ob, org)).filter((m) => m.msg.to[0] === 'outage@example.net')
  assert.equal(stored.length, 1)
})

test('Redis down: 503 with Retry-After and nothing queued, then sending resumes', { timeout: 20_000 }, async () => {
  const before = (await outboundOf(ob, org)).length
  await redis.stop()
  try {
    const r = await ob.request('POST', '/v1/messages/send', { key, body: body(org) })
    assert.equal(r.status, 503, r.text)
    assert.equal(r.body.error.code, 'service_unavailable')
    assert.ok(Number(r.headers.get('retry-after')) >= 1)
  } finally {
    await redis.start()
  }
  assert.equal((await outboundOf(ob, org)).length, before, 'no unthrottled send while the limiter was down')
  const ok = await eventually(async () => {
    const r = await ob.request('POST', '/v1/messages/send', { key, body: body(org) })
    return r.status === 202 ? r : undefined
  }, 'sending to resume', 10_000, 200)
  assert.equal(ok.status, 202)
})

test('a free-plan key gets 60 requests a minute, then 429 with Retry-After and error.retry_after', async () => {
  const free = await ob.org('free')
  const k = await sendKey(ob, free)
  const started = Date.now()
  for (let round = 0; round < 6; round++) {
    const rs = await Promise.all(Array.from({ length: 10 }, async () => await ob.request('POST', '/v1/messages/send', {
      key: k, body: body(free)
    })))
    for (const r of rs) {
      assert.equal(r.status, 202, r.text)
      assert.equal(r.headers.get('ratelimit-limit'), '60')
    }
  }
  // the bucket gains a token a second: on a busy machine the 60 sends may take longer, and earn one more each second
  let r = await ob.request('POST', '/v1/messages/send', { key: k, body: body(free) })
  let extra = 0
  for (; r.status === 202 && extra < 10; extra++) r = await ob.request('POST', '/v1/messages/send', { key: k, body: body(free) })
  assert.ok(extra <= Math.floor((Date.now() - started) / 1000), `${extra} sent past the burst in ${Date.now() - started} ms`)
  assert.equal(r.status, 429)
  assert.equal(r.body.error.code, 'rate_limited')
  assert.ok(Number.isInteger(r.body.error.retry_after) && r.body.error.retry_after >= 1)
  assert.equal(r.headers.get('retry-after'), String(r.body.error.retry_after))
  assert.equal(r.headers.get('ratelimit-remaining'), '0')
  assert.equal((await outboundOf(ob, free)).length, 60 + extra)
})

test('a batch that is partly stored answers 503 listing accepted and failed; the retry with the same key sends only the rest', async () => {
  const jsm = await jetstreamManager(ob.proc.nc)
  const info = await jsm.streams.info(STREAM_OUTBOUND)
  const batchOrg = await ob.org('pro')
  const k = await sendKey(ob, batchOrg)
  const b = { messages: [1, 2, 3, 4, 5].map((n) => body(batchOrg, { to: `p${n}@example.net` })) }
  const headers = { 'content-type': 'application/json', 'idempotency-key': 'partial-1' }
  // Room for exactly two more messages: the stream refuses the rest.
  await jsm.streams.update(STREAM_OUTBOUND, { ...info.config, max_msgs: info.state.messages + 2, discard: DiscardPolicy.New })
  let first
  try {
    first = await ob.request('POST', '/v1/messages/batch', { key: k, rawBody: JSON.stringify(b), headers })
  } finally {
    await jsm.streams.update(STREAM_OUTBOUND, info.config)
  }
  assert.equal(first.status, 503, first.text)
  assert.equal(first.body.error.code, 'queue_full', 'a stream that refuses new messages is a full queue')
  const { accepted, failed } = first.body.error.details as { accepted: Array<{ index: number, id: string }>, failed: number[] }
  assert.equal(accepted.length, 2)
  assert.equal(failed.length, 3)
  assert.deepEqual([...accepted.map((a) => a.index), ...failed].sort(), [0, 1, 2, 3, 4])
  assert.equal((await outboundOf(ob, batchOrg)).length, 2)

  const retry = await ob.request('POST', '/v1/messages/batch', { key: k, rawBody: JSON.stringify(b), headers })
  assert.equal(retry.status, 202, retry.text)
  for (const a of accepted) assert.equal(retry.body.data[a.index].id, a.id, 'the retry keeps the ids of the first attempt')
  const stored = await outboundOf(ob, batchOrg)
  assert.equal(stored.length, 5, 'each message stored once')
  assert.deepEqual(stored.map((s) => s.msg.id).sort(), retry.body.data.map((d: { id: string }) => d.id).sort())
})
