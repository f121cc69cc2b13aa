import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { WebSocket } from 'undici'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { eventually } from '../../helpers/waiting.ts'
import { createTransport } from 'nodemailer'
import { newId } from '../../../protocol/mod.ts'

/**
 * The security log, read from a running gateway's own log output at the default level: one `kind: "security"`
 * line per failed authentication and per change to keys, webhooks and inbound routes, with the organisation and
 * key ids, and no key value or webhook secret anywhere in the log.
 */
let ob: TestOutbox
let org: TestOrg
const logs: string[] = []
before(async () => {
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  ob = await TestOutbox.start({ log: { level: 'info', stream } })
  org = await ob.org()
})
after(async () => { await ob.close() })

type Line = Record<string, any>
const securityLines = (): Line[] => logs.flatMap((l) => l.split('\n')).filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Line).filter((l) => l.kind === 'security')

async function lineFor (pick: (l: Line) => boolean, what: string): Promise<Line> {
  return await eventually(() => securityLines().find(pick), () => `a security line for ${what}; got ${JSON.stringify(securityLines())}`)
}

test('failed authentications and key, webhook and route changes are logged with ids, never with a key value or secret', async () => {
  const secrets: string[] = [org.adminKey]
  const admin = (await ob.request('GET', '/v1/whoami', { key: org.adminKey })).body.key_id as string
  const actor = { org_id: org.orgId, actor_key_id: admin }

  const unknownKey = 'ob_live_' + 'Zq7'.repeat(11)
  secrets.push(unknownKey)
  assert.equal((await ob.request('GET', '/v1/api-keys', { key: unknownKey })).status, 401)
  const httpFail = await lineFor((l) => l.event === 'auth.failed' && l.transport === 'http', 'an HTTP authentication failure')
  assert.equal(httpFail.key_prefix, unknownKey.slice(0, 12))
  assert.match(httpFail.address, /127\.0\.0\.1|::1/)

  const socketKey = 'ob_test_' + 'Wx9'.repeat(11)
  secrets.push(socketKey)
  const ws = new WebSocket(ob.baseUrl.replace('http', 'ws') + '/v1/events/stream')
  const closed = new Promise<number>((resolve) => ws.addEventListener('close', (e) => resolve(e.code)))
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve())
    ws.addEventListener('error', () => reject(new Error('socket error')))
  })
  ws.send(JSON.stringify({ type: 'auth', key: socketKey }))
  assert.equal(await closed, 4401)
  const wsFail = await lineFor((l) => l.event === 'auth.failed' && l.transport === 'websocket', 'a socket authentication failure')
  assert.equal(wsFail.key_prefix, socketKey.slice(0, 12))

  const created = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'ci', domain_id: org.domainId, permissions: ['send'] }
  })
  assert.equal(created.status, 201)
  secrets.push(created.body.key)
  assert.deepEqual(pickIds(await lineFor((l) => l.event === 'api_key.created', 'key creation')), { ...actor, api_key_id: created.body.id })

  const rotated = await ob.request('POST', `/v1/api-keys/${created.body.id}/rotate`, {
    key: org.adminKey, body: { grace_period_minutes: 5 }
  })
  assert.equal(rotated.status, 201)
  secrets.push(rotated.body.key)
  const rotation = await lineFor((l) => l.event === 'api_key.rotated', 'key rotation')
  assert.deepEqual(pickIds(rotation), { ...actor, api_key_id: created.body.id })
  assert.equal(rotation.new_api_key_id, rotated.body.id)

  assert.equal((await ob.request('DELETE', `/v1/api-keys/${rotated.body.id}`, { key: org.adminKey })).status, 204)
  assert.deepEqual(pickIds(await lineFor((l) => l.event === 'api_key.revoked', 'key revocation')),
    { ...actor, api_key_id: rotated.body.id })

  const hook = await ob.request('POST', '/v1/webhooks', { key: org.adminKey, body: { url: 'https://hooks.example.com/outbox?token=url-token-1234', events: ['delivered'] } })
  assert.equal(hook.status, 201)
  secrets.push(hook.body.secret, 'url-token-1234')
  const hookCreated = await lineFor((l) => l.event === 'webhook.created', 'webhook creation')
  assert.deepEqual(pickIds(hookCreated), { ...actor, webhook_id: hook.body.id })
  assert.equal(hookCreated.host, 'hooks.example.com')
  assert.equal((await ob.request('PATCH', `/v1/webhooks/${hook.body.id}`, { key: org.adminKey, body: { status: 'paused' } })).status, 200)
  const hookUpdated = await lineFor((l) => l.event === 'webhook.updated', 'webhook update')
  assert.deepEqual(pickIds(hookUpdated), { ...actor, webhook_id: hook.body.id })
  assert.equal(hookUpdated.status, 'paused')
  const rotatedSecret = await ob.request('POST', `/v1/webhooks/${hook.body.id}/rotate-secret`, {
    key: org.adminKey, body: { grace_period_minutes: 5 }
  })
  assert.equal(rotatedSecret.status, 200)
  secrets.push(rotatedSecret.body.secret)
  const secretRotation = await lineFor((l) => l.event === 'webhook.secret_rotated', 'webhook secret rotation')
  assert.deepEqual(pickIds(secretRotation), { ...actor, webhook_id: hook.body.id })
  assert.equal(secretRotation.expires_at, rotatedSecret.body.previous_secret_expires_at)
  assert.equal((await ob.request('DELETE', `/v1/webhooks/${hook.body.id}`, { key: org.adminKey })).status, 204)
  assert.deepEqual(pickIds(await lineFor((l) => l.event === 'webhook.deleted', 'webhook deletion')), { ...actor, webhook_id: hook.body.id })

  const route = await ob.request('POST', '/v1/inbound/routes', {
    key: org.adminKey, body: { match: `support@${org.domain}`, action: { type: 'webhook', include_attachments: false } }
  })
  assert.equal(route.status, 201)
  const routeCreated = await lineFor((l) => l.event === 'inbound_route.created', 'route creation')
  assert.deepEqual(pickIds(routeCreated), { ...actor, route_id: route.body.id })
  assert.equal(routeCreated.match, `support@${org.domain}`)
  assert.equal((await ob.request('DELETE', `/v1/inbound/routes/${route.body.id}`, { key: org.adminKey })).status, 204)
  assert.deepEqual(pickIds(await lineFor((l) => l.event === 'inbound_route.deleted', 'route deletion')),
    { ...actor, route_id: route.body.id })

  for (const l of securityLines().filter((x) => x.event !== 'auth.failed')) assert.match(l.address, /127\.0\.0\.1|::1/)
  const all = logs.join('')
  for (const s of secrets) {
    assert.equal(all.includes(s), false, `the log holds ${s.slice(0, 12)}…`)
    // Also the random part alone: a key must not be logged under another field name or cut at its prefix.
    if (s.startsWith('ob_')) assert.equal(all.includes(s.slice(12)), false, `the log holds the rest of ${s.slice(0, 12)}…`)
  }
})

/** The id fields a line must carry, for a whole-object comparison that fails on a missing or wrong one. */
function pickIds (l: Line): Record<string, string> {
  const out: Record<string, string> = {}
  for (const k of ['org_id', 'actor_key_id', 'api_key_id', 'webhook_id', 'route_id']) if (l[k] !== undefined) out[k] = l[k]
  return out
}

test('a report to a return path naming no message of ours is a security line', async () => {
  const keyId = ob.proc.cp.verpKeys.signing().id
  const messageId = newId('msg')
  const to = `bounces+${messageId}-${keyId}${'a'.repeat(16)}@bounces.${org.domain}`
  const smtp = createTransport({ host: '127.0.0.1', port: ob.proc.inbound!.port, secure: false, ignoreTLS: true })
  try {
    await smtp.sendMail({
      envelope: { from: '', to: [to] },
      raw: `From: mailer-daemon@remote.test\r\nTo: ${to}\r\nSubject: Undelivered\r\n` +
        'Content-Type: multipart/report; report-type=delivery-status; boundary="b"\r\n\r\n' +
        '--b\r\nContent-Type: text/plain\r\n\r\nfailed\r\n' +
        '--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; remote.test\r\n\r\n' +
        'Final-Recipient: rfc822; victim@remote.test\r\nAction: failed\r\nStatus: 5.1.1\r\n\r\n--b--\r\n'
    })
  } finally {
    smtp.close()
  }
  // the inbound server stores and processes the mail before it drops the report
  const line = await lineFor((l) => l.event === 'report.dropped', 'a dropped report')
  assert.equal(line.level, 40)
  assert.equal(line.message_id, messageId)
  assert.equal(typeof line.reason, 'string')
})
