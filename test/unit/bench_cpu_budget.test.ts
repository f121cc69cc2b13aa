import { test } from 'node:test'
import assert from 'node:assert/strict'
import { attribute, topFunctions, type CpuProfile } from '../../bench/cpu_profile.ts'
import { stageOf, type Frame } from '../../bench/cpu_stages.ts'
import { budgetRows } from '../../bench/cpu_budget_report.ts'

const OUTBOX = 'file:///srv/outbox/dist/'
const MODULES = 'file:///srv/outbox/node_modules/'
const own = (path: string, functionName = 'f'): Frame => ({ functionName, url: OUTBOX + path })
const lib = (path: string, functionName = 'f'): Frame => ({ functionName, url: MODULES + path })
const node = (url: string, functionName = 'f'): Frame => ({ functionName, url })

test('a sample belongs to the stage of the first Outbox frame from its leaf', () => {
  assert.equal(stageOf([lib('ioredis/built/Redis.js', 'evalsha'), own('stores/read_model/message_store.js', 'recordQueued')]),
    'read-model write (gateway and engine)')
  assert.equal(stageOf([own('engine/actor/compose.js', 'compose'), own('engine/actor/deliver.js', 'run')]), 'MIME composition')
  assert.equal(stageOf([own('stores/read_model/message_store.js', 'applyEvent'), own('stores/read_model/projector.js')]),
    'projector (read model from events)')
  assert.equal(stageOf([own('webhooks/sign.js', 'signedHeaders'), own('webhooks/attempts.js')]), 'webhook sign and POST')
  assert.equal(stageOf([own('stores/webhooks/delivery_log.js', 'record')]), 'webhook delivery log')
  assert.equal(stageOf([own('gateway/http/validate.js', 'check')]), 'gateway: parse, auth, validate, accept')
})

test('shared plumbing takes the stage of its caller, and its own when no caller is on the stack', () => {
  const publish = [lib('@nats-io/nats-core/lib/nats.js', 'publish'), own('stores/clients/js_publisher.js', 'publish')]
  assert.equal(stageOf([...publish, own('gateway/send/service.js', 'publish')]), 'JetStream publish of the queued message')
  assert.equal(stageOf([...publish, own('stores/events/event_publish.js', 'publishEvent')]), 'event publish')
  assert.equal(stageOf([...publish, own('stores/message_content/message_content_store.js', 'put')]), 'message content record')
  assert.equal(stageOf([node('', 'parse'), own('stores/clients/js_publisher.js', 'answer'), lib('@nats-io/nats-core/lib/protocol.js')]),
    'PubAck matching (every JetStream publish)')
  assert.equal(stageOf([own('protocol/tracking_tokens.js', 'signToken'), own('engine/actor/compose.js')]), 'MIME composition')
  assert.equal(stageOf([own('stores/clients/script_batch.js', 'flush'), own('stores/batching/turn_batch.js')]),
    'batched Redis writes, flushed by timer')
})

test('DKIM: sign() apart from the canonicalisation around it', () => {
  const dkim = own('engine/actor/dkim.js', 'dkimSignatures')
  assert.equal(stageOf([node('', 'signOneShot'), node('node:internal/crypto/sig', 'sign'), dkim, own('engine/actor/compose.js')]),
    'DKIM: sign() of both keys')
  assert.equal(stageOf([lib('mailauth/lib/tools.js', 'parseHeaders'), dkim]), 'DKIM: header canonicalisation, body hash')
  const signing = {
    stages: new Map([['DKIM: sign() of both keys' as const, 1000]]), functions: new Map(), busyUs: 1000, wallUs: 1000, idleUs: 0, samples: 1
  }
  const rows = budgetRows(signing, { rsaUs: 900, ed25519Us: 100 })
  assert.deepEqual(rows.filter((r) => r.stage.startsWith('DKIM: ') && r.us > 0),
    [{ stage: 'DKIM: RSA-2048 signature', us: 900 }, { stage: 'DKIM: ed25519 signature', us: 100 }])
})

test('without an Outbox frame a sample goes by its library, then by V8\'s pseudo-frame', () => {
  assert.equal(stageOf([node('', '(garbage collector)'), node('', '(root)')]), 'garbage collection')
  assert.equal(stageOf([node('', '(program)')]), 'native code, no JavaScript on the stack (program)')
  const nats = 'NATS client (parsing, socket reads and writes)'
  assert.equal(stageOf([node('', 'parse'), lib('@nats-io/nats-core/lib/parser.js', 'parse')]), nats)
  assert.equal(stageOf([lib('ioredis/built/DataHandler.js')]), 'Redis client')
  // a library's own dist/ folder is not Outbox's code
  assert.equal(stageOf([lib('piscina/dist/worker.js', 'onMessage')]), 'engine: pull and hand-off to a shard thread')
  assert.equal(stageOf([node('node:net', 'onStreamRead')]), 'Node sockets and streams')
  // a socket write goes to the client that made it
  const write = [node('', 'writev'), node('node:internal/stream_base_commons', 'writevGeneric'), node('node:net', 'Socket._writev')]
  assert.equal(stageOf([...write, lib('@nats-io/transport-node/lib/node_transport.js', 'send')]), nats)
  assert.equal(stageOf([...write, lib('nodemailer/dist/esm/smtp-connection/index.js', 'send')]), 'SMTP client')
  assert.equal(stageOf([node('node:zlib', 'processChunk'), node('node:internal/streams/transform', 'final')]), 'message content record')
  assert.equal(stageOf([node('node:internal/process/task_queues', 'processTicksAndRejections')]), 'Node timers and microtasks')
  assert.equal(stageOf([node('', 'JSON.parse')]), 'other')
})

/**
 * root ─┬ (program)            sample at t=1010
 *       ├ (idle)               sample at t=1020
 *       ├ task_queues → message_store.recordQueued → ioredis   sample at t=1030
 *       └ (garbage collector)  samples at t=1040, 1050 and 1060; the profile ends at t=1100
 * The sampling interval (the median delta) is 10 µs, so a sample counts at most 15.
 */
const PROFILE: CpuProfile = {
  nodes: [
    { id: 1, callFrame: node('', '(root)'), children: [2, 3, 4, 7] },
    { id: 2, callFrame: node('', '(program)') },
    { id: 3, callFrame: node('', '(idle)') },
    { id: 4, callFrame: node('node:internal/process/task_queues', 'processTicksAndRejections'), children: [5] },
    { id: 5, callFrame: { ...own('stores/read_model/message_store.js', 'recordQueued'), lineNumber: 80 }, children: [6] },
    { id: 6, callFrame: lib('ioredis/built/Redis.js', 'evalsha') },
    { id: 7, callFrame: node('', '(garbage collector)') }
  ],
  startTime: 1000,
  endTime: 1100,
  samples: [2, 3, 6, 7, 7, 7],
  timeDeltas: [10, 10, 10, 10, 10, 10]
}

test('the window keeps its samples, each weighing the time to the next, cut at the window\'s end; idle is apart', () => {
  const a = attribute(PROFILE, { fromUs: 1015, toUs: 1055 })
  assert.equal(a.samples, 4)
  assert.equal(a.idleUs, 10)
  assert.equal(a.busyUs, 25)
  assert.deepEqual([...a.stages], [['read-model write (gateway and engine)', 10], ['garbage collection', 15]])
  assert.deepEqual(topFunctions(a, 1), [
    { functionName: '(garbage collector)', where: '(native)', stage: 'garbage collection', selfUs: 15 }
  ])
})

test('without a window the whole profile counts; a sample before a gap counts 1.5 intervals, the gap only in wallUs', () => {
  const a = attribute(PROFILE, undefined)
  assert.equal(a.samples, 6)
  assert.equal(a.idleUs, 10)
  // the last sample stands for 40 µs until endTime: the thread was off the CPU for most of it
  assert.equal(a.wallUs, 80)
  assert.equal(a.busyUs, 55)
  assert.equal(a.stages.get('garbage collection'), 35)
  assert.equal(a.stages.get('native code, no JavaScript on the stack (program)'), 10)
  const fn = topFunctions(a, 5).find((f) => f.functionName === 'evalsha')
  assert.equal(fn?.where, 'ioredis/built/Redis.js:1')
  assert.equal(fn?.stage, 'read-model write (gateway and engine)')
})
