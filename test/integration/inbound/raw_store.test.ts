import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { ServerProcess } from '../../helpers/servers.ts'
import { pino } from 'pino'
import { ensureInboundStreams, readRaw, type InboundStores } from '../../../inbound/streams.ts'
import { storeSmall, storeInline, readSmall, deleteSmall, rawToken, RAW_SETTLE_MS } from '../../../inbound/raw_store.ts'
import { InboundProcessor, RawNotYetStored } from '../../../inbound/processor.ts'
import { decodeJob, type InboundJob } from '../../../protocol/mod.ts'
import { STREAM_INBOUND, inboundSubject, shardOf, newId, jetStreamSettings } from '../../../protocol/mod.ts'
import { JsPublisher, type PublishRejectedError, type PublishTimeoutError } from '../../../stores/clients/mod.ts'
import { loadConfig } from '../../../config/mod.ts'

let nats: ServerProcess
let nc: NatsConnection
let stores: InboundStores
const settings = jetStreamSettings(loadConfig({}))

before(async () => {
  nats = await ServerProcess.nats()
  nc = await connect({ servers: nats.url })
  stores = await ensureInboundStreams(nc, settings)
  const getBlob = stores.raw.getBlob.bind(stores.raw)
  stores.raw.getBlob = async (name) => { blobReads++; return await getBlob(name) }
})
let blobReads = 0
after(async () => {
  await nc.close()
  await nats.dispose()
})

test('a one-chunk message is read back byte for byte (direct get, digest checked)', async () => {
  const data = randomBytes(5000)
  await stores.raw.putBlob({ name: 'small' }, data)
  const info = await stores.raw.info('small')
  assert.equal(info?.chunks, 1)
  const before = blobReads
  assert.deepEqual(await readRaw(stores, 'small'), data)
  assert.equal(blobReads, before, 'no consumer-based read')
})

test('a multi-chunk message is read back byte for byte', async () => {
  const data = randomBytes(600 * 1024)
  await stores.raw.putBlob({ name: 'large' }, data)
  assert.ok((await stores.raw.info('large'))!.chunks > 1)
  const before = blobReads
  assert.deepEqual(await readRaw(stores, 'large'), data)
  assert.equal(blobReads, before + 1)
})

test('a missing or deleted message reads as null', async () => {
  assert.equal(await readRaw(stores, 'never-stored'), null)
  await stores.raw.putBlob({ name: 'gone' }, Buffer.from('x'))
  await stores.raw.delete('gone')
  assert.equal(await readRaw(stores, 'gone'), null)
})

test('ensuring the streams twice is harmless', async () => {
  const again = await ensureInboundStreams(nc, settings)
  assert.deepEqual(await readRaw(again, 'small'), await readRaw(stores, 'small'))
})

test('a one-chunk message stored with its job is an ordinary object, read and deleted in one request each', async () => {
  const data = Buffer.from('Subject: hi\r\n\r\nhello\r\n')
  const job: InboundJob = {
    id: newId('msg'), received_at: new Date().toISOString(), mail_from: 'a@sender.test', rcpt_to: ['b@ours.test'], remote_ip: '127.0.0.1',
    helo: 'sender.test', size: data.length
  }
  await storeSmall(stores, data, job, 16)
  // The object store's own API sees it as if `put` had written it.
  const info = await stores.raw.info(job.id)
  assert.equal(info?.size, data.length)
  assert.equal(info?.chunks, 1)
  assert.deepEqual(Buffer.from((await stores.raw.getBlob(job.id))!), data)
  assert.deepEqual(await readRaw(stores, job.id), data, 'digest in the metadata matches')
  // The job names the chunk, so the processor reads it without the metadata.
  const m = await stores.jsm.streams.getMessage(STREAM_INBOUND, { last_by_subj: inboundSubject(shardOf(job.id, 16)) })
  const published = m!.json<InboundJob>()
  assert.equal(published.id, job.id)
  assert.deepEqual(await readSmall(stores, published.raw!), data)
  await assert.rejects(readSmall(stores, { ...published.raw!, sha256: 'x' }), /digest/)
  // One purge removes chunk and metadata.
  await deleteSmall(stores, published.raw!.token)
  assert.equal(await stores.raw.info(job.id), null)
  assert.equal(await readSmall(stores, published.raw!), null)
})

test('a job whose message is not readable is retried while young, dropped once old (processed before)', async () => {
  const processor = new InboundProcessor({
    stores, cp: undefined as never, log: pino({ level: 'silent' }), analysis: undefined as never, messages: undefined as never,
    drops: undefined as never, metrics: undefined as never, eventMaxBytes: 64 * 1024
  })
  const job = (ageMs: number): InboundJob => ({
    id: newId('msg'), received_at: new Date(Date.now() - ageMs).toISOString(), mail_from: '', rcpt_to: ['b@ours.test'],
    remote_ip: '127.0.0.1', helo: '', size: 1, raw: { token: rawToken(newId('msg')), sha256: '' }
  })
  await assert.rejects(processor.handle(job(0)), RawNotYetStored)
  await processor.handle(job(RAW_SETTLE_MS + 1000))
})

test('a message stored inside its job is one job message; processing it reads and deletes nothing', async () => {
  const data = Buffer.from('Subject: inline\r\n\r\nhello\r\n')
  const job: InboundJob = {
    id: newId('msg'), received_at: new Date().toISOString(), mail_from: 'a@sender.test', rcpt_to: ['nobody@unrouted.test'],
    remote_ip: '127.0.0.1', helo: 'sender.test', size: data.length
  }
  await storeInline(stores, data, job, 16)
  assert.equal(await stores.raw.info(job.id), null, 'nothing in the bucket')
  const m = await stores.jsm.streams.getMessage(STREAM_INBOUND, { last_by_subj: inboundSubject(shardOf(job.id, 16)) })
  assert.equal(m!.header.get('Nats-Msg-Id'), job.id)
  const { job: back, raw } = decodeJob(m!.data)
  assert.deepEqual(back, job)
  assert.deepEqual(raw, data)
  // No route matches: the processor only drops the message, and must not touch the store for it.
  const cp = { routes: { list: () => [] }, domainOwner: () => undefined }
  const untouched = { ...stores, jsm: undefined as never, raw: undefined as never }
  const processor = new InboundProcessor({
    stores: untouched, cp: cp as never, log: pino({ level: 'silent' }), analysis: undefined as never, messages: undefined as never,
    drops: undefined as never, metrics: undefined as never, eventMaxBytes: 64 * 1024
  })
  await processor.handle(back, raw)
})

test('publishes wait for their PubAck on one subscription: stored, deduplicated, refused, timed out', async () => {
  const pub = new JsPublisher(nc, 300)
  try {
    const id = newId('msg')
    const first = await pub.publish(inboundSubject(0), Buffer.from('{}'), { msgID: id })
    assert.equal(first.stream, STREAM_INBOUND)
    assert.equal(first.duplicate, false)
    const again = await pub.publish(inboundSubject(0), Buffer.from('{}'), { msgID: id })
    assert.equal(again.duplicate, true)
    assert.equal(again.seq, first.seq)
    // Concurrent publishes each get their own acknowledgement.
    const acks = await Promise.all(Array.from({ length: 20 }, async () => await pub.publish(inboundSubject(1), Buffer.from('{}'))))
    assert.equal(new Set(acks.map((a) => a.seq)).size, 20)
    await assert.rejects(pub.publish('no.stream.here', Buffer.from('x')), (err: PublishRejectedError) => err.code === 'publish_rejected')
    // A responder that never answers: the publish fails after the timeout.
    const silent = nc.subscribe('silent.subject', { callback: () => {} })
    await nc.flush()
    await assert.rejects(pub.publish('silent.subject', Buffer.from('x')), (err: PublishTimeoutError) => err.code === 'publish_timeout')
    silent.unsubscribe()
  } finally {
    pub.close()
  }
})
