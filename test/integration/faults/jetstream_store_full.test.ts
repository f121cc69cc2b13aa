import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { DiscardPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { Kvm } from '@nats-io/kv'
import { Objm } from '@nats-io/obj'
import {
  KV_SHARD_LEASES, OBJ_INBOUND_RAW, STREAM_OUTBOUND, admissionLimitBytes, outboundSubject, streamTable
} from '../../../protocol/mod.ts'
import { ensureStreams, isJetStreamFull } from '../../../stores/clients/mod.ts'
import { addRoute, inboundClient } from '../../helpers/inbound.ts'
import { submissionClient } from '../../helpers/submission.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { freePort } from '../../helpers/ports.ts'
import { closeAgent, messageIdHeader, nothingPending, sinkCounts, untilDelivered, untilNothingPending } from './fault_env.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * A JetStream store at its limit (nats-server `max_file_store`, OB_NATS_STORE_MB the same): the queue of mail
 * that cannot be delivered yet fills its share, sends are refused with 503 `queue_full`, readiness says so, the
 * shard leases stay renewed, and once the destination answers again every accepted message is delivered once,
 * which frees the room, readiness comes back and sends are taken again.
 */
const STORE_MB = 24
const BODY = 'x'.repeat(100_000)
const MAX_SENDS = 600
const RETRY_EVERY_SECOND = Array.from({ length: 300 }, () => '1').join(',')

let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink | undefined
let port: number
let submissionPort: number
let ob: TestOutbox
let org: TestOrg
let key: string

before(async () => {
  nats = await ServerProcess.nats({ maxFileStore: STORE_MB * 1024 * 1024 })
  redis = await ServerProcess.redis()
  port = await freePort() // nothing listens yet: every attempt is deferred and the message stays queued
  submissionPort = await freePort()
  ob = await TestOutbox.start({
    nats, redis,
    env: {
      OB_ROLE: 'all',
      OB_SMTP_RELAY: `smtp://127.0.0.1:${port}`,
      OB_DELIVERY_RETRY_SCHEDULE: RETRY_EVERY_SECOND,
      OB_ENGINE_ACK_WAIT_MS: '2000',
      OB_SHARD_LEASE_MS: '2000',
      OB_NATS_STORE_MB: String(STORE_MB),
      OB_SMTP_SUBMISSION_PORT: String(submissionPort)
    }
  })
  org = await ob.org()
  key = await ob.key(org, ['send'])
  await addRoute(ob, org, `support@${org.domain}`, false)
})
after(async () => {
  await ob.close()
  await closeAgent()
  await sink?.close()
  await nats.dispose()
  await redis.dispose()
})

async function sendOne (i: number): Promise<{ status: number, body: any, retryAfter: string | null }> {
  const r = await ob.request('POST', '/v1/messages/send', {
    key,
    headers: { 'idempotency-key': `fill-${i}` },
    body: {
      from: `App <hello@${org.domain}>`, to: `r${i}@dest.example`, subject: `Filler ${i}`, text: BODY,
      track_opens: false, track_clicks: false
    }
  })
  return { status: r.status, body: r.body, retryAfter: r.headers.get('retry-after') }
}

/** The revision of a shard lease: it grows with every renew. */
async function leaseRevision (): Promise<number> {
  const kv = await new Kvm(ob.proc.nc).open(KV_SHARD_LEASES)
  return (await kv.get('outbound.shard.0'))?.revision ?? 0
}

test('a full JetStream store refuses sends with 503 queue_full and not-ready, keeps delivering, ' +
  'and recovers', { timeout: 240_000 }, async (t) => {
  const accepted: string[] = []
  let refusal: { status: number, body: any, retryAfter: string | null } | undefined
  let next = 0
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (refusal === undefined && next < MAX_SENDS) {
      const i = next++
      let r = await sendOne(i)
      // A publish not confirmed in time on a busy machine is retried with its key, as a client does.
      for (let tries = 0; r.body?.error?.code === 'service_unavailable' && tries < 5; tries++) {
        t.diagnostic(`send ${i}: ${JSON.stringify(r.body)}; retried`)
        r = await sendOne(i)
      }
      if (r.status === 202) accepted.push(r.body.id)
      else refusal ??= r
    }
  }))
  t.diagnostic(`${accepted.length} sends accepted before the store was full`)
  assert.ok(refusal !== undefined, `the store never filled in ${MAX_SENDS} sends`)
  assert.equal(refusal.status, 503)
  assert.equal(refusal.body?.error?.code, 'queue_full', JSON.stringify(refusal.body))
  assert.match(refusal.body.error.message, /store is full/)
  assert.equal(refusal.retryAfter, '30')
  assert.ok(accepted.length >= 10, 'the queue took mail before it filled')
  // Refused at the admission limit, with a quarter of the share left for what a killed NATS server brings back.
  const held = await (await jetstreamManager(ob.proc.nc)).streams.info(STREAM_OUTBOUND)
  t.diagnostic(`queue at ${held.state.bytes} of ${held.config.max_bytes} bytes when sends were refused`)
  assert.ok(held.state.bytes <= admissionLimitBytes(held.config.max_bytes) + 4 * BODY.length, 'sends stop at the admission limit')

  // SMTP submission of a message as large is refused with a temporary reply that says why. The HTTP refusal above
  // may have counted sends still in flight that then failed, leaving room for one more: a submission accepted into
  // that room is delivered with the rest, and the next one is refused.
  const submission = submissionClient(submissionPort, key)
  let refused: string | undefined
  for (let tries = 0; tries < 3 && refused === undefined; tries++) {
    refused = await submission.sendMail({ from: `hello@${org.domain}`, to: 'sub@dest.example', subject: 'Filler', text: BODY }).then(
      () => undefined, (err: { response?: string }) => err.response ?? String(err))
  }
  submission.close()
  assert.match(refused ?? 'accepted three times', /^452 4\.3\.1 .*store is full/)

  // Received mail has a share of its own: a full outbound queue does not refuse it.
  const inbound = inboundClient(ob)
  const received = await inbound.sendMail({
    from: 'someone@sender.example', to: `support@${org.domain}`, subject: 'Hello', text: 'y'.repeat(200_000)
  })
  assert.match(String(received.response), /^250 /)
  inbound.close()

  // Readiness says why the process should take no sends.
  const ready = await ob.request('GET', '/readyz')
  assert.equal(ready.status, 503)
  assert.deepEqual(ready.body, { status: 'queue_full', checks: { nats: 'ok', redis: 'ok', queue: 'full' } })

  // The full queue leaves the leases their room: they are renewed (a lease lasts 2 s, renewed every ~0.7 s).
  const before = await leaseRevision()
  assert.ok(before > 0, 'an engine holds shard 0')
  await eventually(async () => await leaseRevision() >= before + 3, 'the shard lease renewed while the store is full', 30_000, 200)

  // The destination answers again: everything accepted is delivered, once, and that frees the store.
  sink = await SmtpSink.start({ keepRaw: false, port })
  await untilDelivered(sink, org, accepted, 150_000)
  const counts = sinkCounts(sink)
  for (const id of accepted) assert.equal(counts.get(messageIdHeader(org, id)), 1, `${id} delivered exactly once`)

  let again = await ob.request('GET', '/readyz')
  await eventually(async () => (again = await ob.request('GET', '/readyz')).status === 200,
    () => `readyz 200; last ${JSON.stringify(again.body)}`, 30_000, 200)
  assert.equal(again.status, 200, JSON.stringify(again.body))

  // Sends are taken again (within the second the gateway takes to read the queue's size) and delivered.
  let after = await sendOne(MAX_SENDS + 1)
  await eventually(async () => after.status !== 503 || (after = await sendOne(MAX_SENDS + 1)).status !== 503,
    () => `a send taken again; last ${JSON.stringify(after.body)}`, 5_000, 200)
  assert.equal(after.status, 202, JSON.stringify(after.body))
  await untilDelivered(sink, org, [after.body.id], 60_000)
  const state = await untilNothingPending(nats.url, 30_000)
  assert.ok(nothingPending(state), JSON.stringify(state))
  const info = await (await jetstreamManager(ob.proc.nc)).streams.info(STREAM_OUTBOUND)
  assert.equal(info.state.messages, 0, 'the queue is empty again')
})

test('received mail finding its store full is answered 452, and taken again once there is room', { timeout: 120_000 }, async () => {
  // Fill the raw-message bucket's share (objects no job refers to; received mail over 64 KB is stored there).
  const raw = await new Objm(ob.proc.nc).open(OBJ_INBOUND_RAW)
  const fillers: string[] = []
  for (;;) {
    const name = `filler-${fillers.length}`
    try {
      await raw.putBlob({ name }, new Uint8Array(100_000))
    } catch {
      break
    }
    fillers.push(name)
    assert.ok(fillers.length < 100, 'the raw-message bucket never filled')
  }
  const smtp = inboundClient(ob)
  const mail = { from: 'someone@sender.example', to: `support@${org.domain}`, subject: 'Large', text: 'y'.repeat(300_000) }
  const full = await smtp.sendMail(mail).then(() => undefined, (err: { responseCode?: number, response?: string }) => err)
  assert.equal(full?.responseCode, 452, full?.response ?? 'accepted')
  // The outbound queue has a share of its own: sends are taken meanwhile (within the second the gateway takes to read
  // the queue's size again after the previous test filled and emptied it)
  let send = await sendOne(MAX_SENDS + 2)
  await eventually(async () => send.status !== 503 || (send = await sendOne(MAX_SENDS + 2)).status !== 503,
    () => `a send taken while the raw-message bucket is full; last ${JSON.stringify(send.body)}`, 5_000, 200)
  assert.equal(send.status, 202, JSON.stringify(send.body))
  for (const name of fillers) await raw.delete(name)
  // taken again within the second the listener takes to read the store's size
  const attempt = async (): Promise<string> =>
    await smtp.sendMail(mail).then((i) => String(i.response), (err: { response?: string }) => String(err.response))
  let info = await attempt()
  await eventually(async () => !info.startsWith('452') || !(info = await attempt()).startsWith('452'),
    () => `mail taken again; last ${info}`, 5_000, 200)
  assert.match(info, /^250 /)
  smtp.close()
})

test('a NATS server whose store cannot hold OB_NATS_STORE_MB stops the start, saying so', { timeout: 60_000 }, async () => {
  const small = await ServerProcess.nats({ maxFileStore: 16 * 1024 * 1024 })
  const ownRedis = await ServerProcess.redis()
  try {
    const start = TestOutbox.start({ nats: small, redis: ownRedis, env: { OB_ROLE: 'gateway', OB_NATS_STORE_MB: '64' } })
    await assert.rejects(start, (err: Error & { code?: string }) => {
      assert.equal(err.code, 'store_reservation', String(err))
      assert.match(err.message, /cannot reserve .*OB_NATS_STORE_MB/)
      return true
    })
  } finally {
    await small.dispose()
    await ownRedis.dispose()
  }
})

test('a start never lowers the limit of a stream of owed work below what it holds, ' +
  'so nothing queued is dropped', { timeout: 60_000 }, async () => {
  const server = await ServerProcess.nats({ maxFileStore: 64 * 1024 * 1024 })
  const nc = await connect({ servers: server.url })
  try {
    const jsm = await jetstreamManager(nc)
    // OB_OUTBOUND as an earlier version made it: no byte limit, oldest dropped when full
    const [outbound] = streamTable({ replicas: 1, messageContentRetentionDays: 1, storeBytes: 64 * 1024 * 1024 })
    await jsm.streams.add({ ...outbound!.config, discard: DiscardPolicy.Old, max_bytes: -1 })
    const js = jetstream(nc)
    for (let i = 0; i < 60; i++) await js.publish(outboundSubject(0), new Uint8Array(100_000))
    const held = (await jsm.streams.info(STREAM_OUTBOUND)).state
    // OB_NATS_STORE_MB=16 gives OB_OUTBOUND 30% of 16 MB, less than the 6 MB it holds
    await ensureStreams(nc, { replicas: 1, messageContentRetentionDays: 1, storeBytes: 16 * 1024 * 1024 })
    const after = await jsm.streams.info(STREAM_OUTBOUND)
    assert.equal(after.state.messages, 60, 'nothing queued was dropped')
    assert.equal(after.config.discard, DiscardPolicy.New)
    assert.equal(after.config.max_bytes, held.bytes)
    await assert.rejects(js.publish(outboundSubject(0), new Uint8Array(100_000)), (err: unknown) => isJetStreamFull(err))
  } finally {
    await nc.close()
    await server.dispose()
  }
})
