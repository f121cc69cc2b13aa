import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { once } from 'node:events'
import { WebSocket } from 'undici'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually } from '../../helpers/waiting.ts'

// The live feed carries one environment, like the read endpoints: live by default, sandbox traffic only when asked.
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let liveKey: string
let testKey: string

before(async () => {
  sink = await SmtpSink.start()
  ob = await TestOutbox.start({ env: { OB_SMTP_RELAY: sink.url } })
  org = await ob.org()
  liveKey = await ob.key(org, ['send', 'read'])
  testKey = await ob.key(org, ['send', 'read'], 'test')
})
after(async () => {
  await ob.close()
  await sink.close()
})

/** A socket that keeps what it receives. */
class Feed {
  readonly ws: WebSocket
  readonly inbox: any[] = []
  readonly opened: Promise<void>
  readonly closed: Promise<{ code: number }>

  constructor (query = '') {
    this.ws = new WebSocket(ob.baseUrl.replace('http', 'ws') + '/v1/events/stream' + query)
    this.opened = new Promise((resolve, reject) => {
      this.ws.addEventListener('open', () => resolve())
      this.ws.addEventListener('error', () => reject(new Error('socket error')))
    })
    this.ws.addEventListener('message', (m) => { this.inbox.push(JSON.parse(String(m.data))) })
    this.closed = new Promise((resolve) => this.ws.addEventListener('close', (e) => resolve({ code: e.code })))
  }

  send (msg: unknown): void { this.ws.send(JSON.stringify(msg)) }

  async until (what: string, ok: (msgs: any[]) => boolean): Promise<void> {
    await eventually(() => ok(this.inbox), () => `${what}; got ${JSON.stringify(this.inbox)}`)
  }

  async ready (key = liveKey): Promise<void> {
    await this.opened
    this.send({ type: 'auth', key })
    await this.until('ready', (m) => m.some((x) => x.type === 'ready'))
  }

  of (id: string): string[] { return this.inbox.filter((e) => e.data?.message_id === id).map((e) => e.type) }

  async close (): Promise<void> { this.ws.close(); await this.closed }
}

async function send (key: string, to: string): Promise<string> {
  const r = await ob.request('POST', '/v1/messages/send', {
    key, body: { from: `App <hello@${org.domain}>`, to, subject: 'Feed', text: 'hello' }
  })
  assert.equal(r.status, 202, r.text)
  return (r.body as { id: string }).id
}

test('a default socket sees live events only; environment "test" (filter or query) ' +
  'sees the sandbox only', { timeout: 60_000 }, async () => {
  const byDefault = new Feed()
  await byDefault.ready()
  const byFilter = new Feed()
  await byFilter.ready(testKey) // the key's own environment does not choose: the filter does
  byFilter.send({ type: 'filter', types: ['delivered'], environment: 'test' })
  await byFilter.until('filter ack', (m) => m.some((x) => x.type === 'filter'))
  assert.deepEqual(byFilter.inbox.find((x) => x.type === 'filter'), { type: 'filter', types: ['delivered'], environment: 'test' })
  const byQuery = new Feed('?environment=test')
  await byQuery.ready()
  const liveQuery = new Feed('?environment=live')
  await liveQuery.ready()

  const sandbox = await send(testKey, 'someone@example.net')
  const live = await send(liveKey, 'someone@dest.example')
  await byDefault.until('live delivery', () => byDefault.of(live).includes('delivered'))
  await liveQuery.until('live delivery', () => liveQuery.of(live).includes('delivered'))
  await byFilter.until('sandbox delivery', () => byFilter.of(sandbox).includes('delivered'))
  await byQuery.until('sandbox delivery', () => byQuery.of(sandbox).includes('delivered'))
  // Both messages' events are out by now; give the fan-out a moment for anything that should not come.
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.deepEqual(byDefault.of(sandbox), [], 'no sandbox event on a default socket')
  assert.deepEqual(liveQuery.of(sandbox), [])
  assert.deepEqual(byFilter.of(live), [], 'no live event on a sandbox socket')
  assert.deepEqual(byQuery.of(live), [])

  // Back to live on the same socket.
  byQuery.send({ type: 'filter', environment: 'live' })
  await byQuery.until('filter ack', (m) => m.some((x) => x.type === 'filter'))
  const second = await send(liveKey, 'another@dest.example')
  await byQuery.until('live delivery after the switch', () => byQuery.of(second).includes('delivered'))
  for (const f of [byDefault, byFilter, byQuery, liveQuery]) await f.close()
})

test('a bad environment: an error message naming it on the socket (which stays), 400 on the upgrade', async () => {
  const f = new Feed()
  await f.ready()
  f.send({ type: 'filter', environment: 'staging' })
  await f.until('error', (m) => m.some((x) => x.type === 'error'))
  const err = f.inbox.find((x) => x.type === 'error')
  assert.equal(err.code, 'validation_error')
  assert.equal(err.field, 'environment')
  assert.equal(f.ws.readyState, WebSocket.OPEN)
  f.send({ type: 'filter', types: ['delivered'], environment: 'Test' })
  await f.until('second error', (m) => m.filter((x) => x.type === 'error').length === 2)
  f.send({ type: 'filter', types: ['bounced'] })
  await f.until('ack', (m) => m.some((x) => x.type === 'filter'))
  assert.deepEqual(f.inbox.find((x) => x.type === 'filter'), { type: 'filter', types: ['bounced'], environment: 'live' },
    'the bad filters changed nothing')
  await f.close()

  const socket = net.connect(ob.proc.gateway!.port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write('GET /v1/events/stream?environment=staging HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n')
  let received = ''
  socket.on('data', (d: Buffer) => { received += d.toString('latin1') })
  await once(socket, 'close')
  assert.match(received, /^HTTP\/1\.1 400/)
  const body = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)) as { error: { code: string, errors: Array<{ field: string }> } }
  assert.equal(body.error.code, 'validation_error')
  assert.equal(body.error.errors[0]!.field, 'environment')
})
