import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { WebSocket } from 'undici'
import { CLOSE_CODES } from '../../../gateway/ws/event_stream.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { assertHealthy } from './fuzz_helpers.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * Random frames on the event stream socket: before authentication any non-auth frame closes it with a
 * documented code; after authentication a bad frame gets an `error` message and the socket stays open.
 */
let ob: TestOutbox
let org: TestOrg
let key: string
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org('enterprise')
  key = await ob.key(org, ['read'])
})
after(async () => { await ob.close() })

const DOCUMENTED_CLOSE = new Set<number>([1000, 1005, 1006, 1009, ...Object.values(CLOSE_CODES)])

const frame = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom('{"type":"auth"}', '{"type":"auth","key":123}', '{"type":"auth","key":"ob_live_x"}', '{"type":"filter","types":"all"}',
    '{"type":"filter","types":[]}', '{"type":"filter","types":[1,2]}', '{"type":"filter","types":["delivered","nope"]}',
    '{"__proto__":{"type":"auth"}}', '['.repeat(2000) + ']'.repeat(2000), '['.repeat(5000) + ']'.repeat(5000),
    '{"type":"filter","types":["' + 'a'.repeat(10_000) + '"]}'),
  fc.uint8Array({ maxLength: 100 }).map((b) => Buffer.from(b))
)

async function open (): Promise<{ ws: WebSocket, inbox: any[], closed: Promise<number> }> {
  const ws = new WebSocket(ob.baseUrl.replace('http', 'ws') + '/v1/events/stream')
  const inbox: any[] = []
  ws.addEventListener('message', (m) => { inbox.push(JSON.parse(String(m.data))) })
  const closed = new Promise<number>((resolve) => ws.addEventListener('close', (e) => resolve(e.code)))
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve())
    ws.addEventListener('error', () => reject(new Error('socket error')))
  })
  return { ws, inbox, closed }
}

test('before authentication a random frame closes the socket with a documented code', async () => {
  await fc.assert(fc.asyncProperty(frame, async (f) => {
    const c = await open()
    c.ws.send(f)
    const code = await c.closed
    assert.ok(DOCUMENTED_CLOSE.has(code), `close ${code}`)
  }), { numRuns: 25 })
  await assertHealthy(ob)
})

test('after authentication a random frame gets an error message and the socket stays open', async () => {
  const c = await open()
  c.ws.send(JSON.stringify({ type: 'auth', key }))
  await eventually(() => c.inbox.some((m) => m.type === 'ready'), 'ready')
  const small = frame.filter((f) => Buffer.byteLength(f) <= 4096)
  await fc.assert(fc.asyncProperty(small, async (f) => {
    const before = c.inbox.length
    c.ws.send(f)
    await eventually(() => c.inbox.length > before || c.ws.readyState !== WebSocket.OPEN, 'an answer')
    assert.equal(c.ws.readyState, WebSocket.OPEN, `closed after ${String(f).slice(0, 80)}`)
    const reply = c.inbox[c.inbox.length - 1]
    assert.ok(reply.type === 'error' || reply.type === 'filter', JSON.stringify(reply))
  }), { numRuns: 40 })
  // A frame over the 4 KB client message limit: uWS drops the connection (1006) or closes it with 1009.
  c.ws.send('['.repeat(3000) + ']'.repeat(3000))
  const code = await c.closed
  assert.ok(code === 1006 || code === 1009, `close ${code}`)
  await assertHealthy(ob)
})
