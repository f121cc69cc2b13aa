import { test, after, before } from 'node:test'
import assert from 'node:assert/strict'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import { ServerProcess } from '../../helpers/servers.ts'
import { deleteIfStored } from '../../../stores/clients/mod.ts'

// Removing a message by sequence that someone else removed first (a work queue's acknowledgement racing the sweep)
// is not a failure: nats-server 2.9 answers it with the generic "delete failed" code, which must not stop the sweep.
let nats: ServerProcess
let nc: NatsConnection
let jsm: JetStreamManager

before(async () => {
  nats = await ServerProcess.nats()
  nc = await connect({ servers: nats.url })
  jsm = await jetstreamManager(nc)
  await jsm.streams.add({ name: 'DELTEST', subjects: ['deltest.>'] })
})
after(async () => {
  await nc.close()
  await nats.dispose()
})

test('a stored message is removed once; removing it again, or a sequence never stored, says it was not there', async () => {
  const a = await jetstream(nc).publish('deltest.a', 'x')
  assert.equal(await deleteIfStored(jsm, 'DELTEST', a.seq), true)
  assert.equal(await jsm.streams.getMessage('DELTEST', { seq: a.seq }), null)
  assert.equal(await deleteIfStored(jsm, 'DELTEST', a.seq), false)
  assert.equal(await deleteIfStored(jsm, 'DELTEST', a.seq + 1000), false)
})

test('any other failure is thrown', async () => {
  await assert.rejects(deleteIfStored(jsm, 'NO_SUCH_STREAM', 1))
})
