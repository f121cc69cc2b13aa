import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { heldWithin } from '../../helpers/waiting.ts'

let ob: TestOutbox
let org: TestOrg
let key: string
before(async () => {
  ob = await TestOutbox.start({ env: { OB_ROLE: 'gateway' } })
  org = await ob.org('pro')
  key = await ob.key(org, ['send'])
})
after(async () => { await ob.close() })

interface Upload { statusLine?: string, response: string, error?: string }

const CHUNK_BYTES = 64 * 1024

/**
 * One POST on its own TCP connection that keeps uploading the whole body whatever arrives meanwhile, as a plain
 * client does. Settles once the answer's error body has arrived, or the connection closes or fails.
 */
async function upload (payload: Buffer, headers: Record<string, string>, apiKey = key): Promise<Upload> {
  const sock = connect({ host: '127.0.0.1', port: ob.proc.gateway!.port })
  const head = ['POST /v1/messages/send HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${apiKey}`, 'Content-Type: application/json',
    `Content-Length: ${payload.length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n')
  const result: Upload = { response: '' }
  return await new Promise((resolve) => {
    let settled = false
    const settle = (): void => {
      if (settled) return
      settled = true
      sock.destroy()
      resolve(result)
    }
    sock.on('data', (d: Buffer) => {
      result.response += d.toString('latin1')
      const eol = result.response.indexOf('\r\n')
      if (eol >= 0) result.statusLine ??= result.response.slice(0, eol)
      // the end of the error body's JSON
      if (result.response.includes('}}')) settle()
    })
    sock.on('error', (err: NodeJS.ErrnoException) => { result.error ??= err.code ?? err.message })
    sock.on('close', settle)
    sock.setTimeout(20_000, () => { result.error ??= 'timeout'; settle() })
    sock.on('connect', async () => {
      if (!sock.write(head)) await new Promise((resolve) => sock.once('drain', resolve))
      for (let at = 0; at < payload.length && !sock.destroyed; at += CHUNK_BYTES) {
        if (!sock.write(payload.subarray(at, at + CHUNK_BYTES))) {
          await new Promise((resolve) => { sock.once('drain', resolve); sock.once('close', resolve) })
        }
      }
    })
  })
}

function oversized (): Buffer {
  return Buffer.from(JSON.stringify({
    from: `App <hello@${org.domain}>`, to: 'user@example.net', subject: 'Big', html: 'x'.repeat(11 * 1024 * 1024)
  }))
}

for (const connection of ['keep-alive', 'close']) {
  test(`an 11 MB body with Connection: ${connection} always gets its 413, never a reset before it`, { timeout: 240_000 }, async () => {
    const payload = oversized()
    for (let i = 0; i < 30; i++) {
      const r = await upload(payload, { Connection: connection })
      assert.equal(r.statusLine, 'HTTP/1.1 413 Payload Too Large',
        `upload ${i}: ${r.error ?? 'no error'}, got ${JSON.stringify(r.response.slice(0, 200))}`)
      assert.match(r.response, /"payload_too_large"/)
    }
  })
}

test('a keep-alive connection still serves the next request after a 413 for a body it had to read to the end', async () => {
  const small = Buffer.from(JSON.stringify({ from: `App <hello@${org.domain}>`, to: 'user@example.net', subject: 'Hi', html: '<p>Hi</p>' }))
  const payload = oversized()
  const sock = connect({ host: '127.0.0.1', port: ob.proc.gateway!.port })
  await new Promise((resolve) => sock.once('connect', resolve))
  let received = ''
  sock.on('data', (d: Buffer) => { received += d.toString('latin1') })
  const request = (b: Buffer): string => [
    'POST /v1/messages/send HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${key}`, 'Content-Type: application/json',
    `Content-Length: ${b.length}`, '', ''
  ].join('\r\n')
  sock.write(request(payload))
  sock.write(payload)
  sock.write(request(small))
  sock.write(small)
  await heldWithin(() => [...received.matchAll(/HTTP\/1\.1 /g)].length >= 2, 10_000, 50) // the statuses below show what came
  sock.destroy()
  const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1])
  assert.deepEqual(statuses, ['413', '202'], received.slice(0, 500))
})

test('an upload refused before its body is read (unknown key) also gets its answer, ' +
  'with Connection: close', { timeout: 120_000 }, async () => {
  const payload = Buffer.from(JSON.stringify({ html: 'x'.repeat(5 * 1024 * 1024) }))
  for (let i = 0; i < 15; i++) {
    const r = await upload(payload, { Connection: 'close' }, 'ob_live_unknown')
    assert.equal(r.statusLine, 'HTTP/1.1 401 Unauthorized',
      `upload ${i}: ${r.error ?? 'no error'}, got ${JSON.stringify(r.response.slice(0, 200))}`)
  }
})

test('an upload that stalls after its 413 is cut off: the status and error arrive, ' +
  'then the connection closes', { timeout: 60_000 }, async () => {
  const sock = connect({ host: '127.0.0.1', port: ob.proc.gateway!.port })
  sock.on('error', () => {})
  await new Promise((resolve) => sock.once('connect', resolve))
  let received = ''
  sock.on('data', (d: Buffer) => { received += d.toString('latin1') })
  const closed = new Promise((resolve) => sock.once('close', resolve))
  sock.write(['POST /v1/messages/send HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${key}`, 'Content-Type: application/json',
    `Content-Length: ${20 * 1024 * 1024}`, '', ''].join('\r\n'))
  sock.write('{"html":"' + 'x'.repeat(1024 * 1024))
  // nothing more is sent: the gateway gives up on the rest and closes the connection itself
  await closed
  assert.match(received, /^HTTP\/1\.1 413 Payload Too Large\r\n/)
  assert.match(received, /"payload_too_large"/)
  // the connection is cut with the chunked answer left open: a `Connection` header or any other byte after the
  // error would be a malformed chunk
  assert.ok(received.endsWith('"}}'), JSON.stringify(received.slice(-80)))
})
