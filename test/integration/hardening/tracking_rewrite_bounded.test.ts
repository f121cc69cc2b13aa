import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { cpuMs, grewAboutLinearly, ADVERSARIAL_HTML } from '../../helpers/work.ts'

let s: RelayScenario
before(async () => { s = await startRelayScenario({ env: { OB_PUBLIC_URL: 'https://mail.example.net' } }) })
after(async () => { await s.close() })

let sent = 0
/** Sends one tracked message with this HTML and waits for its delivery; answers the body as the sink got it. */
async function deliver (html: string): Promise<string> {
  const to = `reader${++sent}@dest.example`
  const msg = queuedMessage(s.org, { to: [to], html, track_opens: true, track_clicks: true })
  await publishQueued(s.ob.proc.nc, s.ob.proc.config, msg)
  await s.events.until(() => s.events.of(msg.id, 'delivered').length === 1, 120_000)
  // Undo quoted-printable soft line breaks so URLs read whole.
  return s.sink.to(to)[0]!.raw.toString('utf8').replace(/=\r\n/g, '')
}

const N = 25_000
const LINK = '<a href="https://example.org/page">page</a>'

for (const [shape, make] of Object.entries(ADVERSARIAL_HTML)) {
  test(`a tracked send: the work for ${shape} HTML grows about linearly (n and 8n)`, async (t) => {
    await deliver(LINK + make(100))
    const small = await cpuMs(async () => { await deliver(LINK + make(N)) })
    const large = await cpuMs(async () => { await deliver(LINK + make(8 * N)) })
    const figures = `${shape}: ${small.toFixed(0)} ms of CPU for n, ${large.toFixed(0)} ms for 8n`
    t.diagnostic(figures)
    assert.ok(grewAboutLinearly(small, large), figures)
  })
}

test('HTML past the parsing limits is delivered with its links as written and the open pixel', async () => {
  const body = await deliver(LINK + ADVERSARIAL_HTML.nested(200_000))
  assert.match(body, /href=3D"https:\/\/example\.org\/page"/, 'the link is untouched')
  assert.doesNotMatch(body, /\/t\/c\//, 'no click tracking')
  assert.match(body, /https:\/\/mail\.example\.net\/t\/o\//, 'open pixel')
  const normal = await deliver(`<html><body>${LINK}</body></html>`)
  assert.match(normal, /https:\/\/mail\.example\.net\/t\/c\//, 'ordinary HTML is still rewritten')
})
