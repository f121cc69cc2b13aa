import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { request } from 'undici'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { eventually } from '../../helpers/waiting.ts'
import { EventReader } from '../../helpers/events.ts'
import { installationSecret, signToken, newId, type EventRecord, type TokenClaims } from '../../../protocol/mod.ts'
import { suppressionKey } from '../../../stores/control_plane/mod.ts'
import { TrackingRecorder } from '../../../stores/events/mod.ts'

let ob: TestOutbox
let org: TestOrg
let events: EventReader
let secret: Buffer

before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  events = await EventReader.open(ob.proc.nc, org.orgId)
  secret = await installationSecret(ob.proc.cp.settings, ob.proc.config.secret)
})
after(async () => {
  events.close()
  await ob.close()
})

function token (k: TokenClaims['k'], extra: Partial<TokenClaims> = {}): { token: string, claims: TokenClaims } {
  const claims: TokenClaims = { k, o: org.orgId, m: newId('msg'), r: 'reader@remote.test', ...extra }
  return { token: signToken(secret, claims), claims }
}

/** Plain HTTP without following redirects, as a mail client's image loader or a browser's first hop. */
async function get (
  path: string, opts: { method?: 'GET' | 'POST', body?: string, headers?: Record<string, string> } = {}
): Promise<{ status: number, headers: Record<string, unknown>, body: Buffer }> {
  const res = await request(ob.baseUrl + path, {
    method: opts.method ?? 'GET',
    headers: { 'user-agent': 'TestMail/1.0', ...opts.headers },
    ...(opts.body !== undefined ? { body: opts.body } : {})
  })
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) }
}

test('the open pixel is a 1×1 GIF that is never cached, and records opened', async () => {
  const { token: t, claims } = token('o')
  const r = await get(`/t/o/${t}`)
  assert.equal(r.status, 200)
  assert.equal(r.headers['content-type'], 'image/gif')
  assert.match(String(r.headers['cache-control']), /no-store/)
  assert.equal(r.body.subarray(0, 6).toString(), 'GIF89a')
  assert.equal(r.body.readUInt16LE(6), 1)
  assert.equal(r.body.readUInt16LE(8), 1)
  const [e] = await events.waitFor('opened')
  assert.equal(e!.message_id, claims.m)
  const d = e!.data as any
  assert.equal(d.message_id, claims.m)
  assert.equal(d.to, claims.r)
  assert.equal(d.user_agent, 'TestMail/1.0')
  assert.equal(d.ip_address, '127.0.0.1')
  assert.ok(!Number.isNaN(Date.parse(d.opened_at)))
})

test('a click redirects (302) to the original URL and records clicked with the url', async () => {
  const url = 'https://shop.example.org/item?id=42&ref=mail'
  const { token: t, claims } = token('c', { u: url })
  const r = await get(`/t/c/${t}`)
  assert.equal(r.status, 302)
  assert.equal(r.headers.location, url)
  const [e] = await events.waitFor('clicked')
  const d = e!.data as any
  assert.deepEqual([d.message_id, d.to, d.url], [claims.m, claims.r, url])
})

test('opening the unsubscribe link answers a confirmation page and unsubscribes nobody; ' +
  'its button unsubscribes with method "link"', async () => {
  const { token: t, claims } = token('u', { r: 'Leaver@Remote.test' })
  const before = events.events.length
  const r = await get(`/t/u/${t}`)
  assert.equal(r.status, 200)
  assert.match(String(r.headers['content-type']), /^text\/html/)
  assert.match(String(r.headers['cache-control']), /no-store/)
  const page = r.body.toString()
  assert.match(page, /Leaver@Remote\.test/)
  // A form that posts to the page's own URL: nothing of the request is written into the page or a header.
  assert.match(page, /<form method="post"><input type="hidden" name="confirm" value="page"><button type="submit"/)
  assert.doesNotMatch(page, /action=/)
  assert.match(String(r.headers['content-security-policy']), /form-action 'self'/)
  for (const [name, value] of Object.entries(r.headers)) assert.ok(!String(value).includes(t.slice(0, 16)), `the token is not in ${name}`)
  // A mail scanner opening every link unsubscribes nobody.
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'leaver@remote.test'), false)
  await events.settle(600)
  assert.equal(events.events.slice(before).filter((e) => e.type === 'unsubscribed').length, 0)

  // The page's button: a form POST of confirm=page.
  const done = await get(`/t/u/${t}`, {
    method: 'POST', body: 'confirm=page', headers: { 'content-type': 'application/x-www-form-urlencoded' }
  })
  assert.equal(done.status, 200)
  assert.match(String(done.headers['content-type']), /^text\/html/)
  assert.match(done.body.toString(), /You are unsubscribed/)
  const [e] = await events.waitFor('unsubscribed')
  assert.deepEqual({ ...(e!.data as any), unsubscribed_at: undefined },
    { message_id: claims.m, to: claims.r, method: 'link', unsubscribed_at: undefined })
  const s = ob.proc.cp.suppressions.get(suppressionKey(org.orgId, 'leaver@remote.test'))
  assert.equal(s?.reason, 'unsubscribe')
})

test('the RFC 8058 one-click POST answers 200 and records method "one-click"', async () => {
  const { token: t, claims } = token('u', { r: 'oneclick@remote.test' })
  const r = await get(`/t/u/${t}`, {
    method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' }
  })
  assert.equal(r.status, 200)
  assert.equal(r.body.length, 0)
  const all = await events.waitFor('unsubscribed', 2)
  const e = all.find((x) => x.message_id === claims.m)
  assert.equal((e?.data as any).method, 'one-click')
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'oneclick@remote.test'), true)
})

test('a forged, altered or misused token is 404 not_found and records nothing', async () => {
  const before = events.events.length
  const { token: good } = token('o')
  const [payload, mac] = good.split('.') as [string, string]
  const altered = `${payload.slice(0, -2)}${payload.at(-2) === 'A' ? 'B' : 'A'}${payload.at(-1)}.${mac}`
  const otherKey = signToken(Buffer.from('not-the-installation-secret-at-all-000'),
    { k: 'o', o: org.orgId, m: newId('msg'), r: 'x@remote.test' })
  const { token: clickWithoutUrl } = token('c')
  for (const path of [`/t/o/${altered}`, `/t/o/${otherKey}`, '/t/o/garbage', `/t/c/${good}`, `/t/u/${good}`, `/t/c/${clickWithoutUrl}`]) {
    const r = await get(path)
    assert.equal(r.status, 404, path)
    assert.equal(JSON.parse(r.body.toString()).error.code, 'not_found', path)
  }
  const post = await get(`/t/u/${altered}`, { method: 'POST', body: 'List-Unsubscribe=One-Click' })
  assert.equal(post.status, 404)
  await events.settle(600)
  assert.equal(events.events.length, before)
})

test('identical opens inside one dedupe slot are one event; another client is another event', async () => {
  const rec = await TrackingRecorder.open(ob.proc.nc, ob.proc.cp, ob.proc.config.secret)
  const { claims } = token('o')
  const now = 1_800_000_000_000
  await rec.opened(claims, { ip: '192.0.2.1', userAgent: 'A', now })
  await rec.opened(claims, { ip: '192.0.2.1', userAgent: 'A', now: now + 1 })
  await rec.opened(claims, { ip: '192.0.2.1', userAgent: 'B', now: now + 2 })
  await events.settle(600)
  const mine = events.of('opened').filter((e) => e.message_id === claims.m)
  assert.deepEqual(mine.map((e) => (e.data as any).user_agent).sort(), ['A', 'B'])
})

test('opens, clicks and unsubscribes of a tagged message carry its tags, looked up from its record', async () => {
  const key = await ob.key(org, ['send'])
  const sent = await ob.request('POST', '/v1/messages/send', {
    key,
    body: {
      from: `App <app@${org.domain}>`, to: 'tagged@remote.test', subject: 'Hi', html: '<p>Hi</p>', tags: ['newsletter', 'week-48'],
      scheduled_at: new Date(Date.now() + 3600_000).toISOString()
    }
  })
  assert.equal(sent.status, 202, sent.text)
  const m = sent.body.id as string
  const claims = (k: TokenClaims['k'], extra: Partial<TokenClaims> = {}): string =>
    signToken(secret, { k, o: org.orgId, m, r: 'tagged@remote.test', ...extra })
  assert.equal((await get(`/t/o/${claims('o')}`)).status, 200)
  assert.equal((await get(`/t/c/${claims('c', { u: 'https://shop.example.org/a' })}`)).status, 302)
  assert.equal((await get(`/t/u/${claims('u')}`, {
    method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' }
  })).status, 200)
  const mine = (type: string): EventRecord | undefined => events.events.find((e) => e.type === type && e.message_id === m)
  await eventually(() => mine('opened') !== undefined && mine('clicked') !== undefined && mine('unsubscribed') !== undefined,
    'the three events')
  for (const type of ['opened', 'clicked', 'unsubscribed']) {
    assert.deepEqual(mine(type)?.data.tags, ['newsletter', 'week-48'], type)
    // and its sending domain, for webhook filters (on the record, not in the envelope)
    assert.equal(mine(type)?.domain, org.domain, type)
  }
})
