import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { once } from 'node:events'
import { WebSocket } from 'undici'
import { CLOSE_CODES } from '../../../gateway/ws/event_stream.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { eventually } from '../../helpers/waiting.ts'

/** Open sockets of the live event stream are capped per API key (4429 after auth) and per address (429 on upgrade). */
let ob: TestOutbox
let org: TestOrg
before(async () => {
  ob = await TestOutbox.start({ env: { OB_EVENT_STREAM_MAX_PER_KEY: '2', OB_EVENT_STREAM_MAX_PER_ADDRESS: '4' } })
  org = await ob.org()
})
after(async () => { await ob.close() })

/** Fails instead of hanging when the server never does what the test waits for. */
async function within<T> (p: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)
  })
  try { return await Promise.race([p, late]) } finally { clearTimeout(timer) }
}

interface Client { ws: WebSocket, next: () => Promise<any>, closed: Promise<{ code: number, reason: string }> }

async function connect (): Promise<Client> {
  const ws = new WebSocket(ob.baseUrl.replace('http', 'ws') + '/v1/events/stream')
  const inbox: any[] = []
  let wake = (): void => {}
  ws.addEventListener('message', (m) => { inbox.push(JSON.parse(String(m.data))); wake() })
  const closed = new Promise<{ code: number, reason: string }>((resolve) => ws.addEventListener('close', (e) => {
    resolve({ code: e.code, reason: e.reason })
    wake()
  }))
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve())
    ws.addEventListener('error', () => reject(new Error('socket error')))
  })
  const next = async (): Promise<any> => {
    while (inbox.length === 0 && ws.readyState !== WebSocket.CLOSED) await new Promise<void>((resolve) => { wake = resolve })
    return inbox.shift()
  }
  return { ws, next, closed }
}

async function authed (key: string): Promise<Client> {
  const c = await connect()
  c.ws.send(JSON.stringify({ type: 'auth', key }))
  assert.deepEqual(await within(c.next(), 'ready'), { type: 'ready', organization_id: org.orgId })
  return c
}

/** A WebSocket upgrade over a raw socket, to read the HTTP answer when it is not 101; the socket stays open on 101. */
async function rawUpgrade (): Promise<{ status: number, head: string, body: string, socket: net.Socket }> {
  const socket = net.connect(ob.proc.gateway!.port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write('GET /v1/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n')
  let text = ''
  while (!text.includes('\r\n\r\n') || (text.startsWith('HTTP/1.1 429') && !text.endsWith('}'))) {
    const [chunk] = await once(socket, 'data') as [Buffer]
    text += chunk.toString('latin1')
  }
  const [head = '', body = ''] = text.split('\r\n\r\n')
  return { status: Number(head.split(' ')[1]), head, body, socket }
}

/** Upgrades until one is accepted: the server counts a socket closed by the client once its close arrives. */
async function upgradeWhenFree (): Promise<net.Socket> {
  return await eventually(async () => {
    const r = await rawUpgrade()
    if (r.status === 101) return r.socket
    r.socket.destroy()
    return undefined
  }, 'an upgrade to be accepted', undefined, 50)
}

test('a key holds at most OB_EVENT_STREAM_MAX_PER_KEY sockets and an address at most OB_EVENT_STREAM_MAX_PER_ADDRESS', async () => {
  const keyA = await ob.key(org, ['read'])
  const keyB = await ob.key(org, ['read'])
  const a1 = await authed(keyA)
  const a2 = await authed(keyA)
  const a3 = await connect()
  a3.ws.send(JSON.stringify({ type: 'auth', key: keyA }))
  const refused = await within(a3.closed, 'the third socket of one key is closed')
  assert.equal(refused.code, CLOSE_CODES.rateLimited)
  assert.match(refused.reason, /API key/)
  const b1 = await authed(keyB)

  // a1, a2, b1 and this one fill the address's four places; a fifth upgrade is 429 in the API's error format.
  const fourth = await upgradeWhenFree()
  const over = await rawUpgrade()
  over.socket.destroy()
  assert.equal(over.status, 429)
  assert.match(over.head, /\r\nretry-after: 60/i)
  const body = JSON.parse(over.body)
  assert.equal(body.error.code, 'rate_limited')
  assert.match(body.error.message, /this address/)

  // Closing a socket frees its places: the key's and the address's.
  a1.ws.close()
  await a1.closed
  fourth.destroy()
  ;(await upgradeWhenFree()).destroy()
  const a4 = await authed(keyA)
  for (const c of [a2, b1, a4]) {
    c.ws.close()
    await c.closed
  }
})
