import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Agent, fetch } from 'undici'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { GATEWAY_CHILD, spawnChild, stopChild, type Child } from '../../helpers/children.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * Two gateway processes behind one NATS and one Redis, as behind a load balancer: keys reach every gateway
 * through KV watches, per-key rate limits are one budget in Redis, and an Idempotency-Key replays across them.
 */
let nats: ServerProcess
let redis: ServerProcess
let admin: TestOutbox
let org: TestOrg
let a: Child
let b: Child
const agent = new Agent({ keepAliveTimeout: 1000 })

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  // this process only writes the organisation to the control plane
  admin = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway' } })
  org = await admin.org('free')
  const env = {
    NATS_URL: nats.url, REDIS_URL: redis.url, OB_DOMAIN_VERIFICATION: 'off', OB_SMTP_INBOUND_PORT: '0', OB_SHUTDOWN_TIMEOUT_MS: '2000'
  }
  ;[a, b] = await Promise.all([spawnChild(GATEWAY_CHILD, env), spawnChild(GATEWAY_CHILD, env)])
})
after(async () => {
  await Promise.all([stopChild(a), stopChild(b)])
  await agent.close().catch(() => {})
  await admin.close()
  await nats.dispose()
  await redis.dispose()
})

async function call (g: Child, method: string, path: string, key: string, body?: unknown): Promise<{ status: number, body: any }> {
  const res = await fetch(`http://127.0.0.1:${g.port!}${path}`, {
    method,
    dispatcher: agent,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
}

test('a key created through gateway A works at gateway B, which learns it from the key watch without a restart', async () => {
  const created = await call(a, 'POST', '/v1/api-keys', org.adminKey, { name: 'made at A', domain_id: org.domainId, permissions: ['read'] })
  assert.equal(created.status, 201)
  // B knows keys only from its mirror of the key bucket, which nothing but the watch fills after its start: 401
  // until the watch brings the key, then 200.
  const seen = await eventually(async () => {
    const r = await call(b, 'GET', '/v1/whoami', created.body.key)
    return r.status === 401 ? undefined : r
  }, 'gateway B to answer the new key with anything but 401', undefined, 20)
  assert.equal(seen.status, 200, 'the key authenticates at B')
})

test('the free plan allows 60 requests per minute across both gateways together', async () => {
  const key = await admin.key(org, ['read'])
  const statuses = { a: [] as number[], b: [] as number[] }
  const started = Date.now()
  for (let i = 0; i < 80; i++) {
    const g = i % 2 === 0 ? 'a' : 'b'
    statuses[g].push((await call(g === 'a' ? a : b, 'GET', '/v1/whoami', key)).status)
  }
  const all = [...statuses.a, ...statuses.b]
  const allowed = all.filter((s) => s === 200).length
  // the burst is 60; one more token refills each second the loop runs
  const refills = Math.ceil((Date.now() - started) / 1000)
  assert.ok(allowed >= 60 && allowed <= 60 + refills, `allowed ${allowed} of 80 in ${refills} s`)
  assert.equal(all.filter((s) => s !== 200 && s !== 429).length, 0)
  assert.ok(statuses.a.includes(429) && statuses.b.includes(429), 'both gateways refuse once the shared budget is spent')
})

test('an Idempotency-Key used at gateway A replays at gateway B without a second message', async () => {
  const key = await admin.key(org, ['send'])
  const body = { from: `shop@${org.domain}`, to: 'buyer@example.net', subject: 'Receipt', html: '<p>Thanks</p>' }
  const send = async (g: Child): Promise<{ status: number, replayed: string | null, body: any }> => {
    const res = await fetch(`http://127.0.0.1:${g.port!}/v1/messages/send`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'order-7-receipt' },
      body: JSON.stringify(body)
    })
    return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.json() }
  }
  const first = await send(a)
  assert.equal(first.status, 202)
  const again = await send(b)
  assert.equal(again.status, 202)
  assert.equal(again.replayed, 'true')
  assert.deepEqual(again.body, first.body)
})
