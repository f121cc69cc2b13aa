import { test, before, after } from 'node:test'
import { randomBytes } from 'node:crypto'
import assert from 'node:assert/strict'
import { WebSocket } from 'undici'
import { CLOSE_CODES } from '../../../gateway/ws/event_stream.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { rawHttp } from '../fuzz/fuzz_helpers.ts'

/**
 * Malformed keys are a 401 in the error format, never a throw; guessing keys from one address is cut off
 * after 30 failed authentications a minute with 429 `rate_limited` and `retry_after`, while a valid key from that
 * same address is still served.
 * The tests share one address (127.0.0.1), so the malformed-key test stays under the limit and runs first.
 */
let ob: TestOutbox
let org: TestOrg
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
})
after(async () => { await ob.close() })

const MALFORMED: Array<[string, string]> = [
  ['short', 'Bearer ob_live_abc'],
  ['one short of the minimum', `Bearer ob_live_${'a'.repeat(15)}`],
  ['too long', `Bearer ob_live_${'a'.repeat(65)}`],
  ['10 KB key', `Bearer ob_live_${'a'.repeat(10_240)}`],
  ['unknown prefix', `Bearer sk_live_${'a'.repeat(32)}`],
  ['unicode', `Bearer ob_live_${'é'.repeat(20)}`],
  ['emoji', `Bearer ob_live_${'😀'.repeat(20)}`],
  ['right shape, unknown key', `Bearer ob_live_${'Z'.repeat(40)}`],
  ['lower-case bearer', `bearer ob_live_${'b'.repeat(32)}`],
  ['no scheme', `ob_live_${'c'.repeat(32)}`],
  ['Basic scheme', 'Basic b2JfbGl2ZV94eHg6'],
  ['Bearer alone', 'Bearer'],
  ['Bearer and spaces', 'Bearer    '],
  ['two keys', `Bearer ob_live_${'d'.repeat(32)} ob_live_${'e'.repeat(32)}`],
  ['tab separator', `Bearer\tob_live_${'f'.repeat(32)}`],
  ['empty', '']
]

/**
 * The limit is a continuous bucket of 30 a minute (one back every 2 s), so on a slow machine a few more than 30
 * failures can be answered before the first 429.
 */
function allowedBefore (started: number): number {
  return 30 + Math.ceil((Date.now() - started) / 2000)
}

test('wrong-length, unicode, 10 KB and oddly-schemed keys are a 401 in the error format', async () => {
  for (const [name, value] of MALFORMED) {
    // Raw bytes: unicode goes out as UTF-8, which fetch would refuse to send.
    const authorization = value === '' ? '' : `Authorization: ${value}\r\n`
    const r = await rawHttp(ob.proc.gateway!.port, Buffer.from(`GET /v1/whoami HTTP/1.1\r\nHost: x\r\n${authorization}\r\n`))
    assert.ok(r !== null, name)
    assert.equal(r.status, 401, `${name}: ${r.status} ${r.body}`)
    assert.equal(JSON.parse(r.body).error.code, 'unauthorized', name)
  }
  // The real key with a wrong suffix or prefix is not accepted either.
  for (const value of [`${org.adminKey}x`, org.adminKey.slice(0, -1), ` ${org.adminKey}`.replace(' ', 'x')]) {
    const r = await ob.request('GET', '/v1/whoami', { key: value })
    assert.equal(r.status, 401, value)
  }
})

/** A key of the right shape that exists nowhere; each has its own display prefix, so only the address is shared. */
function randomKey (): string {
  return `ob_live_${randomBytes(24).toString('hex')}`
}

test('more than 30 failed authentications a minute from one address → 429 rate_limited with retry_after', async () => {
  let unauthorized = 0
  const started = Date.now()
  let limited: any
  for (let i = 0; i < 60 && limited === undefined; i++) {
    const r = await ob.request('GET', '/v1/whoami', { key: randomKey() })
    if (r.status === 401) unauthorized++
    else if (r.status === 429) limited = r
    else assert.fail(`unexpected ${r.status} ${r.text}`)
  }
  assert.ok(limited !== undefined, 'guessing was cut off')
  assert.ok(unauthorized <= allowedBefore(started), `${unauthorized} guesses answered before the limit`)
  assert.equal(limited.body.error.code, 'rate_limited')
  assert.match(limited.body.error.message, /from this address/)
  assert.ok(Number.isInteger(limited.body.error.retry_after) && limited.body.error.retry_after >= 1)
  assert.equal(limited.headers.get('retry-after'), String(limited.body.error.retry_after))
  // Without OB_TRUSTED_PROXIES a client cannot pick the address it is counted under.
  const forwarded = await ob.request('GET', '/v1/whoami', { key: randomKey(), headers: { 'x-forwarded-for': '192.0.2.99' } })
  assert.equal(forwarded.status, 429)
  // Unauthenticated endpoints stay reachable.
  assert.equal((await ob.request('GET', '/healthz')).status, 200)
})

test('a valid key is served from an address that is over its failure limit', async () => {
  // The address is blocked by the test above; these keep it blocked, as a guesser behind the same NAT would.
  for (let i = 0; i < 5; i++) assert.equal((await ob.request('GET', '/v1/whoami', { key: randomKey() })).status, 429)
  const good = await ob.request('GET', '/v1/whoami', { key: org.adminKey })
  assert.equal(good.status, 200, good.text)
  assert.equal(good.body.organization_id, org.orgId)
  const send = await ob.request('POST', '/v1/messages/send', {
    key: org.adminKey, body: { from: `a@${org.domain}`, to: 'x@dest.example', subject: 's', text: 't' }
  })
  assert.equal(send.status, 202, send.text)
})

/** The first thing the event stream says to `{type: auth, key}`: a message type, or the close code. */
async function streamAnswer (key: string): Promise<string | number> {
  const ws = new WebSocket(ob.baseUrl.replace('http', 'ws') + '/v1/events/stream')
  try {
    return await new Promise<string | number>((resolve, reject) => {
      ws.addEventListener('open', () => { ws.send(JSON.stringify({ type: 'auth', key })) })
      ws.addEventListener('message', (e) => { resolve(JSON.parse(String(e.data)).type) })
      ws.addEventListener('close', (e) => { resolve(e.code) })
      ws.addEventListener('error', () => { reject(new Error('event stream error')) })
    })
  } finally {
    ws.close()
  }
}

test('on the event stream too, a blocked address gets 4429 for a bad key and is served with a valid one', async () => {
  assert.equal(await streamAnswer(randomKey()), CLOSE_CODES.rateLimited)
  assert.equal(await streamAnswer(org.adminKey), 'ready')
})
