import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { TestOutbox } from '../../helpers/outbox.ts'
import { eventually } from '../../helpers/waiting.ts'

let ob: TestOutbox | undefined
after(async () => { await ob?.close() })

test('clients that abort mid-upload leave nothing in flight, so a drain does not wait for its deadline', { timeout: 90_000 }, async () => {
  // A long shutdown deadline, so a drain that waits for it cannot be mistaken for one that finished.
  ob = await TestOutbox.start({ env: { OB_ROLE: 'gateway', OB_SHUTDOWN_TIMEOUT_MS: '60000' } })
  const org = await ob.org('pro')
  const key = await ob.key(org, ['send'])
  const server = ob.proc.gateway!.server
  const declared = 1024 * 1024
  const sockets: Socket[] = []
  for (let i = 0; i < 5; i++) {
    const sock = connect({ host: '127.0.0.1', port: ob.proc.gateway!.port })
    sock.on('error', () => {})
    await new Promise((resolve) => sock.once('connect', resolve))
    sock.write(['POST /v1/messages/send HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${key}`, 'Content-Type: application/json',
      `Content-Length: ${declared}`, '', ''].join('\r\n'))
    sock.write('{"html":"' + 'x'.repeat(64 * 1024))
    sockets.push(sock)
  }
  await eventually(() => server.inFlight === 5, 'the five uploads to be in flight')
  for (const sock of sockets) sock.destroy()
  await eventually(() => server.inFlight === 0, 'the aborted uploads to leave nothing in flight')

  let deadlineTimer: NodeJS.Timeout | undefined
  const outcome = await Promise.race([
    ob.proc.stop().then(() => 'stopped'),
    new Promise<string>((resolve) => { deadlineTimer = setTimeout(() => resolve('still waiting at 30 s'), 30_000) })
  ])
  clearTimeout(deadlineTimer)
  assert.equal(outcome, 'stopped', 'the drain finished long before its 60 s deadline')
})
