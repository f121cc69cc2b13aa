import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import fc from 'fast-check'
import { ROUTES } from '../../../gateway/routes/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { assertDocumented, assertHealthy, concretePath, httpMethod, rawHttp, type RawResponse } from './fuzz_helpers.ts'

/**
 * What arrives on the wire rather than through a well-behaved client: random paths, methods, header bytes,
 * oversized headers and slow senders. A request the HTTP parser refuses may be answered by closing the
 * connection; anything the gateway answers is a documented 4xx, never a 5xx, and the server stays up.
 */
let ob: TestOutbox
let org: TestOrg
let port: number
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org('enterprise')
  port = ob.proc.gateway!.port
})
after(async () => { await ob.close() })

function checkRaw (r: RawResponse | null, what: string): void {
  if (r === null) return // the parser refused the bytes and closed the connection: refused cleanly
  assert.notEqual(r.status, 0, `${what}: a reply that is not HTTP: ${r.head.slice(0, 100)}`)
  if (r.status >= 400 && r.status < 500 && !/content-type: application\/json/i.test(r.head)) {
    // uWS's own parser answers some malformed requests itself (before any route runs) and closes.
    assert.match(r.head, /\r\nconnection: close|^HTTP\/1\.1 4\d\d/i, what)
    return
  }
  assertDocumented(r.status, r.body, what)
}

const segment = fc.oneof(
  fc.constantFrom('..', '.', '%2e%2e', '%2F', '%00', '%ff', '%', '%zz', '', 'v1', 'messages', 'api-keys', '%E2%82%AC', 'é', '😀', '~', ';',
    'a?b=c', '#x'),
  fc.stringMatching(/^[A-Za-z0-9_%.-]{1,20}$/),
  fc.integer({ min: 1000, max: 9000 }).map((n) => 'a'.repeat(n))
)
const randomPath = fc.array(segment, { minLength: 0, maxLength: 6 })
  .chain((segs) => fc.boolean().map((slash) => '/' + segs.join('/') + (slash ? '/' : '')))
const knownPathVariant = fc.constantFrom(...ROUTES.map((r) => concretePath(r))).chain((p) => fc.constantFrom(
  p + '/', p + '//', p.toUpperCase(), p.replace('/v1/', '/v1/../v1/'), p.replace('/v1/', '/%76%31/'), p + '%00', p + '?limit=-1&cursor=%ff',
  p + '?limit=99999999999999999999', '//' + p.slice(1), p + '/..'
))

test('random paths and variants of known paths get a documented answer', async () => {
  const methods = fc.constantFrom('GET', 'POST', 'DELETE', 'PATCH')
  await fc.assert(fc.asyncProperty(fc.oneof(randomPath, knownPathVariant), methods, async (path, method) => {
    // Bytes outside ASCII go out as UTF-8, as a careless client would send them.
    const req = Buffer.from(`${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.adminKey}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}')
    checkRaw(await rawHttp(port, req), `${method} ${path.slice(0, 100)}`)
  }), { numRuns: 120 })
  await assertHealthy(ob)
})

test('unknown and odd methods on every path get a documented answer or a clean close', async () => {
  const paths = [...new Set(ROUTES.map((r) => concretePath(r)))]
  await fc.assert(fc.asyncProperty(fc.constantFrom(...paths), fc.oneof(fc.constantFrom('PUT', 'OPTIONS', 'HEAD', 'TRACE', 'CONNECT', 'PROPFIND', 'BREW', 'get', 'Post', 'M-SEARCH', 'X'.repeat(300)), fc.stringMatching(/^[A-Z]{1,12}$/)), async (path, method) => {
    const head = method === 'HEAD'
    const r = await rawHttp(port,
      `${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.adminKey}\r\nContent-Length: 0\r\n\r\n`)
    if (head && r !== null) { assert.ok(r.status < 500, `HEAD ${path} → ${r.status}`); return }
    checkRaw(r, `${method} ${path}`)
  }), { numRuns: 80 })
  await assertHealthy(ob)
})

test('Content-Type variants and random header values on every body route', async () => {
  const bodyRoutes = ROUTES.filter((r) => r.body !== undefined)
  const headerValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 200 })
  await fc.assert(fc.asyncProperty(
    fc.constantFrom(...bodyRoutes),
    fc.oneof(fc.constantFrom('application/json', 'APPLICATION/JSON', 'application/json;charset=utf-16', 'application/jsonx',
      'application/problem+json', 'text/json', 'application/json, text/plain', ';', '*/*'), headerValue),
    fc.dictionary(fc.stringMatching(/^x-[a-z]{1,10}$/), headerValue, { maxKeys: 5 }),
    fc.oneof(headerValue, fc.constant('')),
    async (r, contentType, extra, idem) => {
      const method = httpMethod(r)
      const res = await ob.request(method, concretePath(r), {
        key: org.adminKey,
        rawBody: '{"x":1}',
        headers: { ...extra, 'content-type': contentType, 'idempotency-key': idem, 'x-request-id': idem }
      })
      assertDocumented(res.status, res.text, `${method} ${r.path} ct=${contentType}`)
    }), { numRuns: 120 })
  await assertHealthy(ob)
})

test('CR, LF and NUL inside header values over a raw socket are refused or held, never executed or a 5xx', async () => {
  // Every combination at once: uWS holds a request whose header bytes it refuses until its idle timeout.
  const cases: Array<[string, string]> = []
  for (const name of ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id', 'User-Agent']) {
    for (const bad of ['\r', '\n', '\0', '\r\nX-Injected: 1', '\nAuthorization: Bearer x', '\r\n\r\nGET /v1/whoami HTTP/1.1']) {
      cases.push([name, bad])
    }
  }
  await Promise.all(cases.map(async ([name, bad]) => {
    const value = name === 'Authorization' ? `Bearer ${org.adminKey}${bad}` : `value${bad}`
    const r = await rawHttp(port, `GET /v1/whoami HTTP/1.1\r\nHost: x\r\n${name}: ${value}\r\nContent-Length: 0\r\n\r\n`, 2000, true)
    const what = `${name} with ${JSON.stringify(bad)}`
    checkRaw(r, what)
    // A CR or LF ends the header line (that is HTTP itself); what follows is a header of its own, never part of the key.
    if (r !== null && name === 'Authorization' && r.status === 200) assert.equal(bad.startsWith('\r\n'), true, what)
  }))
  await assertHealthy(ob)
})

test('a 100 KB header value is refused with a 4xx or a closed connection, and the server stays up', async () => {
  for (const name of ['Authorization', 'X-Padding', 'Content-Type', 'Idempotency-Key']) {
    const value = name === 'Authorization' ? 'Bearer ob_live_' + 'a'.repeat(100_000) : 'a'.repeat(100_000)
    const r = await rawHttp(port,
      `POST /v1/messages/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.adminKey}\r\n${name}: ${value}\r\n` +
      'Content-Length: 2\r\n\r\n{}')
    if (r !== null) assert.ok(r.status >= 400 && r.status < 500, `${name}: ${r.status}`)
    checkRaw(r, `100 KB ${name}`)
  }
  await assertHealthy(ob)
})

async function openSocket (): Promise<Socket> {
  const s = connect(port, '127.0.0.1')
  s.on('error', () => {})
  await new Promise<void>((resolve, reject) => { s.once('connect', resolve); s.once('error', reject) })
  return s
}

test('slow clients do not block other requests', async () => {
  // One sends its headers and then trickles the body; one never finishes its headers; one never sends the body.
  const trickle = await openSocket()
  trickle.write(`POST /v1/messages/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.adminKey}\r\n` +
    'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"fr')
  const unfinishedHead = await openSocket()
  unfinishedHead.write('GET /v1/whoami HTTP/1.1\r\nHost: x\r\nX-Slow: ')
  const noBody = await openSocket()
  noBody.write(`POST /v1/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.adminKey}\r\nContent-Type: application/json\r\n` +
    'Content-Length: 5000\r\n\r\n')
  const sockets = [trickle, unfinishedHead, noBody]
  try {
    for (let i = 0; i < 5; i++) {
      trickle.write('o')
      unfinishedHead.write('x')
      const res = await ob.request('GET', '/v1/whoami', { key: org.adminKey })
      assert.equal(res.status, 200, 'another request completes while the slow ones are open')
      const sent = await ob.request('POST', '/v1/messages/send', {
        key: org.adminKey, body: { from: `a@${org.domain}`, to: 'b@example.com', subject: 's', text: 't' }
      })
      assert.ok(sent.status < 500, sent.text)
    }
    for (const s of sockets) assert.equal(s.destroyed, false, 'the slow connections are still open')
  } finally {
    for (const s of sockets) s.destroy()
  }
  await assertHealthy(ob)
})

test('request smuggling (CL.TE, TE.CL, duplicate Content-Length, obfuscated TE, pipelining) never runs the hidden request', async () => {
  const hidden = (email: string): string => {
    const body = JSON.stringify({ email })
    return `POST /v1/suppressions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.adminKey}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body}`
  }
  const front = 'POST /v1/webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n'
  const cases: Record<string, (s: string) => string> = {
    clte: (s) => `${front}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${s}`,
    tecl: (s) => `${front}Transfer-Encoding: chunked\r\nContent-Length: 200\r\n\r\n0\r\n\r\n${s}`,
    chunked: (s) => `${front}Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n${s}`,
    duplicateLength: (s) => `${front}Content-Length: 2\r\nContent-Length: ${2 + s.length}\r\n\r\n{}${s}`,
    spacedTe: (s) => `${front}Transfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n${s}`,
    obfuscatedTe: (s) => `${front}Transfer-Encoding: xchunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n${s}`,
    // An unauthenticated request answered after a Redis round trip, with a second one pipelined behind it:
    // uWS closes the connection rather than run a request queued behind an unanswered one.
    pipelined: (s) => `GET /v1/whoami HTTP/1.1\r\nHost: x\r\n\r\n${s}`
  }
  await Promise.all(Object.entries(cases).map(async ([name, build]) => {
    const r = await rawHttp(port, build(hidden(`${name.toLowerCase()}@smuggled.test`)), 2000, true)
    checkRaw(r, name)
  }))
  const list = await ob.request('GET', '/v1/suppressions?limit=100', { key: org.adminKey })
  assert.equal(list.status, 200)
  assert.doesNotMatch(list.text, /smuggled\.test/, 'no hidden request ran')
  await assertHealthy(ob)
})
