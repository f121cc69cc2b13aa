import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { once } from 'node:events'
import { WebSocket } from 'undici'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { event, publish } from './fixtures.ts'
import { EVENTUALLY_TIMEOUT_MS, eventually, heldWithin } from '../../helpers/waiting.ts'

let ob: TestOutbox
let org: TestOrg
let key: string
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  key = await ob.key(org, ['read'])
})
after(async () => { await ob.close() })

/** A client that queues what it receives, so a test can await the next message or the close. */
class Client {
  readonly ws: WebSocket
  private readonly inbox: any[] = []
  readonly closed: Promise<{ code: number, reason: string }>
  readonly opened: Promise<void>

  constructor () {
    this.ws = new WebSocket(ob.baseUrl.replace('http', 'ws') + '/v1/events/stream')
    this.opened = new Promise((resolve, reject) => {
      this.ws.addEventListener('open', () => resolve())
      this.ws.addEventListener('error', () => reject(new Error('socket error')))
    })
    this.ws.addEventListener('message', (m) => { this.inbox.push(JSON.parse(String(m.data))) })
    this.closed = new Promise((resolve) => this.ws.addEventListener('close', (e) => {
      resolve({ code: e.code, reason: e.reason })
    }))
  }

  send (msg: unknown): void { this.ws.send(JSON.stringify(msg)) }

  async next (timeoutMs = 5000): Promise<any> {
    await eventually(() => {
      if (this.inbox.length > 0) return true
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error('closed while waiting for a message')
      return false
    }, 'a message on the socket', timeoutMs)
    return this.inbox.shift()
  }

  async authed (k = key): Promise<void> {
    await this.opened
    this.send({ type: 'auth', key: k })
    const ready = await this.next()
    assert.deepEqual(ready, { type: 'ready', organization_id: org.orgId })
  }
}

/** The socket's close, or undefined while it is still open after the time a test gives anything to happen. */
async function closedOrOpen (c: Client): Promise<{ code: number, reason: string } | undefined> {
  let timer: NodeJS.Timeout | undefined
  try {
    const open = new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), EVENTUALLY_TIMEOUT_MS) })
    return await Promise.race([c.closed, open])
  } finally {
    clearTimeout(timer)
  }
}

test('an authenticated socket receives the organisation\'s live events as webhook envelopes', async () => {
  const c = new Client()
  await c.authed()
  const other = await ob.org()
  await publish(ob, event(other, 'msg_00000000000000000000000001', 'delivered'))
  const e = event(org, 'msg_00000000000000000000000002', 'delivered', new Date(), { smtp_response: '250 OK' })
  await publish(ob, e)
  const got = await c.next()
  assert.deepEqual(got, { id: e.id, type: 'delivered', timestamp: e.timestamp, data: e.data }, 'own event, not the other org\'s')
  c.ws.close()
  await c.closed
})

test('a filter keeps only the chosen types; a bad filter gets an error and the socket stays', async () => {
  const c = new Client()
  await c.authed()
  c.send({ type: 'filter', types: ['nope'] })
  const err = await c.next()
  assert.equal(err.type, 'error')
  assert.equal(err.field, 'types')
  c.send({ type: 'filter', types: ['bounced', 'inbound'] })
  assert.deepEqual(await c.next(), { type: 'filter', types: ['bounced', 'inbound.received'], environment: 'live' })
  const mid = 'msg_00000000000000000000000003'
  await publish(ob, event(org, mid, 'opened'))
  const bounced = event(org, mid, 'bounced', new Date(), { bounce_type: 'hard' })
  await publish(ob, bounced)
  const got = await c.next()
  assert.equal(got.id, bounced.id, 'the opened event was filtered out')
  c.ws.close()
  await c.closed
})

test('a bad key or a first message that is not auth closes with 4401', async () => {
  const bad = new Client()
  await bad.opened
  bad.send({ type: 'auth', key: 'ob_live_AAAAAAAAAAAAAAAAAAAAAAAA' })
  assert.equal((await bad.closed).code, 4401)
  const noAuth = new Client()
  await noAuth.opened
  noAuth.send({ type: 'filter', types: ['delivered'] })
  assert.equal((await noAuth.closed).code, 4401)
})

test('a key without read closes with 4403', async () => {
  const sendOnly = await ob.key(org, ['send'])
  const c = new Client()
  await c.opened
  c.send({ type: 'auth', key: sendOnly })
  assert.equal((await c.closed).code, 4403)
})

test('revoking a key through the API closes its open stream at once, without waiting for an event', async () => {
  const k = await ob.key(org, ['read'])
  const c = new Client()
  await c.authed(k)
  const id = ob.proc.cp.keyByValue(k)!.id
  let received = 0
  c.ws.addEventListener('message', () => { received++ })
  assert.equal((await ob.request('DELETE', `/v1/api-keys/${id}`, { key: org.adminKey })).status, 204)
  // No event is published and the key has no expiry: only the revocation itself, as the control plane's change
  // feed shows it, can close the socket, so a close at all is the close "at once".
  const closed = await closedOrOpen(c)
  assert.ok(closed !== undefined, 'closed after the revocation')
  assert.equal(closed.code, 4401)
  assert.equal(received, 0, 'closed without an event reaching the socket')
})

test('a key rotated with a grace period keeps its stream until the grace period ends, then loses it', async () => {
  const k = await ob.key(org, ['read'])
  const c = new Client()
  await c.authed(k)
  const record = ob.proc.cp.keyByValue(k)!
  // A grace period of one second: written directly, as the API counts it in minutes.
  await ob.proc.cp.apiKeys.put(record.id, { ...record, expires_at: new Date(Date.now() + 1000).toISOString() })
  await new Promise((resolve) => setTimeout(resolve, 500))
  assert.equal(c.ws.readyState, WebSocket.OPEN, 'open during the grace period')
  const closed = await closedOrOpen(c)
  assert.equal(closed?.code, 4401, 'closed once the grace period ended')
})

test('no auth message within 5 seconds closes with 4401', async () => {
  const c = new Client()
  await c.opened
  const closed = await c.closed
  assert.equal(closed.code, 4401)
})

/** The close code in a server-to-client frame stream (unmasked frames), or undefined if none yet. */
function closeCode (buf: Buffer): number | undefined {
  let off = 0
  while (off + 2 <= buf.length) {
    const opcode = buf[off]! & 0x0f
    let len = buf[off + 1]! & 0x7f
    let head = 2
    if (len === 126) { if (off + 4 > buf.length) return undefined; len = buf.readUInt16BE(off + 2); head = 4 }
    if (len === 127) { if (off + 10 > buf.length) return undefined; len = Number(buf.readBigUInt64BE(off + 2)); head = 10 }
    if (off + head + len > buf.length) return undefined
    if (opcode === 8) return buf.readUInt16BE(off + head)
    off += head + len
  }
  return undefined
}

test('a socket that does not read is closed with 1013 instead of buffering without bound', async () => {
  const socket = net.connect(ob.proc.gateway!.port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write('GET /v1/events/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n')
  let received = Buffer.alloc(0)
  const onData = (d: Buffer): void => { received = Buffer.concat([received, d]) }
  socket.on('data', onData)
  while (!received.includes('\r\n\r\n')) await once(socket, 'data')
  assert.match(received.toString('latin1'), /^HTTP\/1\.1 101/)
  received = received.subarray(received.indexOf('\r\n\r\n') + 4)
  // A masked client text frame with the auth message.
  const payload = Buffer.from(JSON.stringify({ type: 'auth', key }))
  const mask = Buffer.from([1, 2, 3, 4])
  const frame = Buffer.concat([
    Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]), mask, payload.map((b, i) => b ^ mask[i % 4]!)
  ])
  socket.write(frame)
  while (!received.includes('"ready"')) await once(socket, 'data')
  socket.pause()
  const big = 'x'.repeat(60_000)
  // Far more than the kernel's socket buffers plus the 1 MiB allowance.
  for (let i = 0; i < 150; i++) await publish(ob, event(org, 'msg_00000000000000000000000005', 'opened', new Date(), { i, big }))
  socket.resume()
  // the close frame follows the backlog the socket drains; a socket the gateway ended early ends the wait too
  await heldWithin(() => closeCode(received) !== undefined || socket.destroyed, 10_000)
  socket.destroy()
  assert.equal(closeCode(received), 1013)
})
