import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { ServerProcess } from '../../helpers/servers.ts'
import { ensureInboundStreams, readRaw, type InboundStores } from '../../../engine/inbound/streams.ts'

let nats: ServerProcess
let nc: NatsConnection
let stores: InboundStores

before(async () => {
  nats = await ServerProcess.nats()
  nc = await connect({ servers: nats.url })
  stores = await ensureInboundStreams(nc, 1)
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
  const again = await ensureInboundStreams(nc, 1)
  assert.deepEqual(await readRaw(again, 'small'), await readRaw(stores, 'small'))
})
