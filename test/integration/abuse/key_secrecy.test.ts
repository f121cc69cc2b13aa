import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { Redis } from 'ioredis'
import { jetstreamManager } from '@nats-io/jetstream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'

/**
 * No API key value is kept anywhere: keys are created through the API and by rotation, used for traffic (good,
 * near-miss and revoked) with logging at debug level, and then every Redis value, every message of every NATS
 * stream (KV buckets and object stores are streams too) and every log line is searched for each key value.
 */
let ob: TestOutbox
let org: TestOrg
const logs: string[] = []
before(async () => {
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  ob = await TestOutbox.start({ log: { level: 'debug', stream } })
  org = await ob.org()
})
after(async () => { await ob.close() })

async function redisValues (url: string): Promise<string[]> {
  const r = new Redis(url, { lazyConnect: true })
  await r.connect()
  const out: string[] = []
  try {
    let cursor = '0'
    do {
      const [next, keys] = await r.scan(cursor, 'COUNT', 500)
      cursor = next
      for (const k of keys) {
        out.push(k)
        const type = await r.type(k)
        if (type === 'string') out.push((await r.getBuffer(k))?.toString('latin1') ?? '')
        else if (type === 'hash') out.push(JSON.stringify(await r.hgetall(k)))
        else if (type === 'list') out.push(JSON.stringify(await r.lrange(k, 0, -1)))
        else if (type === 'set') out.push(JSON.stringify(await r.smembers(k)))
        else if (type === 'zset') out.push(JSON.stringify(await r.call('ZRANGE', k, '0', '-1', 'WITHSCORES')))
        else if (type === 'stream') out.push(JSON.stringify(await r.xrange(k, '-', '+')))
        else out.push(`<${type}>`)
      }
    } while (cursor !== '0')
  } finally {
    r.disconnect()
  }
  return out
}

async function natsMessages (): Promise<{ streams: string[], data: string[] }> {
  const jsm = await jetstreamManager(ob.proc.nc)
  const streams: string[] = []
  const data: string[] = []
  for await (const si of jsm.streams.list()) {
    streams.push(si.config.name)
    for (let seq = si.state.first_seq; seq <= si.state.last_seq && si.state.messages > 0; seq++) {
      const m = await jsm.streams.getMessage(si.config.name, { seq }).catch(() => null)
      if (m === null) continue
      data.push(m.subject, Buffer.from(m.data).toString('latin1'))
      if (m.header !== undefined) for (const [k, v] of m.header) data.push(`${k}: ${v.join(',')}`)
    }
  }
  return { streams, data }
}

test('no API key value is found in Redis, in any NATS stream or KV bucket, or in the logs', async () => {
  const values = [org.adminKey]
  const created = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'ci', domain_id: org.domainId, permissions: ['send', 'read'] }
  })
  assert.equal(created.status, 201, created.text)
  values.push(created.body.key)
  const sandbox = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'sb', domain_id: org.domainId, permissions: ['send'], environment: 'test' }
  })
  values.push(sandbox.body.key)
  const rotated = await ob.request('POST', `/v1/api-keys/${created.body.id}/rotate`, {
    key: org.adminKey, body: { grace_period_minutes: 5 }
  })
  assert.equal(rotated.status, 201, rotated.text)
  values.push(rotated.body.key)
  const doomed = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'doomed', domain_id: org.domainId, permissions: ['read'] }
  })
  values.push(doomed.body.key)
  assert.equal((await ob.request('DELETE', `/v1/api-keys/${doomed.body.id}`, { key: org.adminKey })).status < 300, true)

  // Traffic: every key used, a revoked one, near misses, a send that is queued and produces events.
  for (const k of values) await ob.request('GET', '/v1/whoami', { key: k })
  for (const k of values) await ob.request('GET', '/v1/whoami', { key: k.slice(0, -1) + (k.endsWith('a') ? 'b' : 'a') })
  const sent = await ob.request('POST', '/v1/messages/send', {
    key: sandbox.body.key,
    body: { from: `me@${org.domain}`, to: 'you@example.com', subject: 'key check', text: `hello ${org.adminKey.slice(0, 12)}` }
  })
  assert.equal(sent.status, 202, sent.text)
  await ob.request('POST', '/v1/messages/send', {
    key: rotated.body.key,
    body: { from: `me@${org.domain}`, to: 'x@example.com', subject: 's', text: 't' },
    headers: { 'idempotency-key': 'secrecy-1' }
  })
  await ob.request('GET', '/v1/messages', { key: rotated.body.key })
  await new Promise((resolve) => setTimeout(resolve, 500)) // let events and projections land before scanning

  const redis = await redisValues(ob.redisServer.url)
  const nats = await natsMessages()
  assert.ok(redis.length > 0, 'Redis holds something to scan')
  assert.ok(nats.streams.some((s) => s.startsWith('KV_')), `KV buckets scanned: ${nats.streams.join(', ')}`)
  assert.ok(nats.streams.includes('OB_OUTBOUND') || nats.streams.some((s) => s.startsWith('OB_')), nats.streams.join(', '))
  assert.ok(logs.length > 0, 'debug logs were captured')
  for (const v of values) {
    assert.match(v, /^ob_(live|test)_/)
    const secretPart = v.slice(v.indexOf('_', 3) + 1)
    for (const [where, haystack] of [['Redis', redis], ['NATS', nats.data], ['logs', logs]] as const) {
      const hit = haystack.find((h) => h.includes(v) || h.includes(secretPart))
      assert.equal(hit, undefined, `${v.slice(0, 12)}… found in ${where}: ${hit?.slice(0, 200)}`)
    }
  }
})
