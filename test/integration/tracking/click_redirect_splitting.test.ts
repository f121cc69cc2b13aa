import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { simpleParser } from 'mailparser'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { type EventWatcher, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { installationSecret, newId, signToken } from '../../../protocol/mod.ts'
import { rawHttp } from '../fuzz/fuzz_helpers.ts'

/**
 * A link whose href decodes to CR LF (`&#13;&#10;`) must never become a `Location` header: it is left untracked
 * when the message is composed, a click token that carries one anyway is refused when redeemed, and nothing
 * after a line break ever reaches the response as a header of its own.
 */
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher
let scenario: RelayScenario
const PUBLIC = 'https://mail.example.net'
before(async () => {
  ({ sink, ob, org, events } = scenario = await startRelayScenario({ env: { OB_ROLE: 'all', OB_PUBLIC_URL: PUBLIC } }))
})
after(async () => { await scenario.close() })

const INJECTED = 'Set-Cookie: sid=attacker'

function rawGet (path: string): ReturnType<typeof rawHttp> {
  return rawHttp(ob.proc.gateway!.port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
}

test('a link with encoded CR LF is delivered untracked; the clean link beside it is tracked and redirects', async () => {
  const html = '<p><a href="https://shop.example.org/a&#13;&#10;Set-Cookie:%20sid=attacker">bad</a> ' +
    '<a href="https://shop.example.org/b?x=&#10;Refresh: 0;url=https://evil.example/">bad2</a> ' +
    '<a href="https://shop.example.org/ok">ok</a></p>'
  const sent = await ob.request('POST', '/v1/messages/send', {
    key: org.adminKey, body: { from: `me@${org.domain}`, to: 'reader@dest.example', subject: 'links', html }
  })
  assert.equal(sent.status, 202, sent.text)
  const id = sent.body.id as string
  await events.until(() => events.of(id, 'delivered').length === 1)
  const mail = await simpleParser(sink.to('reader@dest.example')[0]!.raw)
  const hrefs = [...String(mail.html).matchAll(/href="([^"]*)"/g)].map((m) => m[1]!)
  assert.equal(hrefs.length, 3, String(mail.html))
  assert.ok(!hrefs[0]!.startsWith(`${PUBLIC}/t/c/`), `the CR LF link is not tracked: ${hrefs[0]}`)
  assert.ok(!hrefs[1]!.startsWith(`${PUBLIC}/t/c/`), `the LF link is not tracked: ${hrefs[1]}`)
  assert.ok(hrefs[2]!.startsWith(`${PUBLIC}/t/c/`), `the clean link is tracked: ${hrefs[2]}`)
  const r = await rawGet(hrefs[2]!.slice(PUBLIC.length))
  assert.equal(r?.status, 302)
  assert.match(r!.head, /\r\nLocation: https:\/\/shop\.example\.org\/ok\r\n/i)
})

test('a click token that carries CR, LF, NUL or a non-http URL is 404, and no header is written from it', async () => {
  const secret = await installationSecret(ob.proc.cp.settings, ob.proc.config.secret)
  const urls = [
    `https://shop.example.org/\r\n${INJECTED}\r\nRefresh: 0;url=https://evil.example/`,
    `https://shop.example.org/\n${INJECTED}`,
    `https://shop.example.org/\r${INJECTED}`,
    'https://shop.example.org/\u0000x',
    'https://shop.example.org/\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello',
    'javascript://x/%0Aalert(1)',
    'https://[bad'
  ]
  for (const u of urls) {
    const token = signToken(secret, { k: 'c', o: org.orgId, m: newId('msg'), r: 'reader@dest.example', u })
    const r = await rawGet(`/t/c/${token}`)
    assert.ok(r !== null, JSON.stringify(u))
    assert.equal(r.status, 404, `${JSON.stringify(u)}: ${r.head}`)
    assert.doesNotMatch(r.head, /set-cookie|refresh|location/i, JSON.stringify(u))
    assert.equal(JSON.parse(r.body).error.code, 'not_found')
  }
})
