import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { OutboxClient, OutboxApiError } from '../../../client/src/mod.ts'

// A real HTTP server that answers like an overloaded Outbox: the scripted statuses first, then 202.
let server: Server
let script: Array<{ status: number, body: unknown, headers?: Record<string, string> }> = []
const seen: IncomingHttpHeaders[] = []
let base = ''

before(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers)
    req.resume()
    req.on('end', () => {
      const next = script.shift() ?? { status: 202, body: { id: 'msg_1', status: 'queued', created_at: new Date().toISOString() } }
      res.writeHead(next.status, { 'content-type': 'application/json', 'x-request-id': `req_${seen.length}`, ...next.headers })
        .end(JSON.stringify(next.body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
after(async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)) })

const unavailable = { status: 503, body: { error: { code: 'service_unavailable', message: 'Try again', retry_after: 0 } } }
const body = { from: 'a@example.com', to: 'b@example.net', subject: 'Hi', html: '<p>Hi</p>' }

test('a send keeps one generated Idempotency-Key across its retries', async () => {
  seen.length = 0
  script = [unavailable, { status: 502, body: { error: { code: 'bad_gateway', message: 'upstream' } } }]
  const client = new OutboxClient({ apiKey: 'ob_test_x', baseUrl: base, retry: { baseDelayMs: 1, maxDelayMs: 2 } })
  const sent = await client.request<{ id: string }>({ method: 'POST', path: '/v1/messages/send', body, idempotent: true })
  assert.equal(sent.id, 'msg_1')
  assert.equal(seen.length, 3)
  const keys = seen.map((h) => h['idempotency-key'])
  assert.match(keys[0] as string, /^[0-9a-f-]{36}$/)
  assert.deepEqual(new Set(keys).size, 1, 'the same key on every attempt')
  await client.request({ method: 'POST', path: '/v1/messages/send', body, idempotent: true })
  assert.notEqual(seen[3]!['idempotency-key'], keys[0], 'a new call gets a new key')
})

test('a caller-chosen Idempotency-Key is used as is', async () => {
  seen.length = 0
  script = [unavailable]
  const client = new OutboxClient({ apiKey: 'ob_test_x', baseUrl: base, retry: { baseDelayMs: 1 } })
  await client.request({ method: 'POST', path: '/v1/messages/send', body, idempotent: true }, { idempotencyKey: 'order-1042' })
  assert.deepEqual(seen.map((h) => h['idempotency-key']), ['order-1042', 'order-1042'])
})

test('non-send writes carry no Idempotency-Key; 400 is never retried; attempts stop at maxAttempts', async () => {
  seen.length = 0
  script = [{
    status: 400,
    body: { error: { code: 'validation_error', message: 'Invalid request', errors: [{ field: 'name', message: 'is required' }] } }
  }]
  const client = new OutboxClient({ apiKey: 'ob_test_x', baseUrl: base, retry: { baseDelayMs: 1, maxAttempts: 3 } })
  const err = await client.request({ method: 'POST', path: '/v1/templates', body: {} }).catch((e: unknown) => e)
  assert.ok(err instanceof OutboxApiError)
  assert.deepEqual(err.errors, [{ field: 'name', message: 'is required' }])
  assert.equal(err.requestId, 'req_1')
  assert.equal(seen.length, 1)
  assert.equal(seen[0]!['idempotency-key'], undefined)
  seen.length = 0
  script = [unavailable, unavailable, unavailable, unavailable]
  const last = await client.request({ method: 'GET', path: '/v1/whoami' }).catch((e: unknown) => e)
  assert.ok(last instanceof OutboxApiError && last.status === 503)
  assert.equal(seen.length, 3)
})
