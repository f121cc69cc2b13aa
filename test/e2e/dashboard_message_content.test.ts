import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Frame, Page } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
import { TestOutbox, type TestOrg } from '../helpers/outbox.ts'
import { browserMissing, launchBrowser, screenshot, signedInPage } from '../helpers/browser.ts'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { STREAM_MESSAGE_CONTENT, messageContentSubject } from '../../protocol/mod.ts'
import { MessageContentStore } from '../../stores/message_content/mod.ts'
import { event, publish } from '../integration/readmodel/fixtures.ts'
import { eventually, nothingHappensFor } from '../helpers/waiting.ts'

const missing = browserMissing()
let ob: TestOutbox
let org: TestOrg
let browser: Browser
let sandboxKey: string
/** Counts every request, to show that the shown HTML fetches nothing. */
let remote: Server
const hits: string[] = []

before(async () => {
  if (missing !== undefined) return
  ob = await TestOutbox.start()
  org = await ob.org('pro')
  sandboxKey = await ob.key(org, ['send', 'read'], 'test')
  browser = await launchBrowser()
  // the page the frame is tried on without a policy, and its icon, are not what is counted
  remote = createServer((req, res) => {
    if (req.url !== '/bare' && req.url !== '/favicon.ico') hits.push(req.url ?? '')
    res.end(req.url === '/bare' ? '<!DOCTYPE html><title>bare</title>' : 'x')
  })
  await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve))
})
after(async () => {
  await browser?.close()
  await ob?.close()
  remote?.close()
})

/** A message sent with the sandbox key whose content the engine has recorded. */
async function sent (body: Record<string, unknown>): Promise<string> {
  const r = await ob.request('POST', '/v1/messages/send', {
    key: sandboxKey, body: { from: `Shop <orders@${org.domain}>`, to: 'delivered@simulator.test', ...body }
  })
  assert.equal(r.status, 202, r.text)
  const id = r.body.id as string
  await eventually(async () => (await ob.request('GET', `/v1/messages/${id}/content`, { key: org.adminKey })).status === 200,
    'content recorded')
  return id
}

async function openMessage (page: Page, id: string): Promise<void> {
  await page.goto(`${ob.baseUrl}/dashboard#/messages/${id}`)
  await page.getByRole('heading', { name: 'Content' }).waitFor()
  await page.getByTestId('content-attachments').waitFor()
}

/** The frame showing the message's HTML. */
async function htmlFrame (page: Page): Promise<Frame> {
  const handle = await page.getByTestId('content-html').elementHandle()
  const frame = await handle!.contentFrame()
  assert.ok(frame !== null)
  await frame.waitForLoadState()
  return frame
}

/** A 1×1 PNG, as an inline image's bytes. */
const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

async function serious (page: Page): Promise<string[]> {
  // the frame shows the sender's HTML, which axe cannot enter (no scripts run there); the page around it is checked
  const result = await new AxeBuilder({ page }).exclude('iframe.preview').analyze()
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`)
}

for (const width of [390, 1280]) {
  test(`at ${width} px the message page shows the HTML in a sandboxed frame with its inline (cid:) image, remote images ` +
    'hidden until asked for, the text, the attachments; no page scroll sideways, no serious axe finding', { skip: missing }, async () => {
    const origin = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`
    const id = await sent({
      subject: 'Your order 1042 has shipped and is on its way to the address you gave us',
      html: '<table width="900"><tr><td><img src="cid:logo@shop" alt="Shop logo" width="120" height="40"><h1>Shipped</h1>' +
        `<p>Your parcel is on its way.</p><img src="${origin}/banner-${width}.png" alt="Banner" width="300" height="60"></td></tr></table>`,
      text: `Your parcel is on its way. ${'A-very-long-tracking-reference-without-spaces-'.repeat(6)}`,
      attachments: [
        { filename: 'invoice-1042-with-a-rather-long-file-name.pdf', content: Buffer.from('%PDF-1.4').toString('base64') },
        { filename: 'logo.png', content: PIXEL_PNG, content_type: 'image/png', content_id: 'logo@shop' }
      ]
    })
    const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
    await page.setViewportSize({ width, height: 800 })
    await openMessage(page, id)
    const frameEl = page.getByTestId('content-html')
    assert.equal(await frameEl.getAttribute('sandbox'), '')
    assert.match((await frameEl.getAttribute('srcdoc'))!, /^<!DOCTYPE html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:">/)
    const frame = await htmlFrame(page)
    assert.equal(await frame.locator('h1').textContent(), 'Shipped')
    const logo = frame.locator('img[alt="Shop logo"]')
    assert.match((await logo.getAttribute('src'))!, /^data:image\/png;base64,/, 'the cid: image is shown from the stored content')
    await eventually(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the inline image loads')
    const notice = page.getByTestId('remote-images')
    assert.match((await notice.textContent())!, /^Remote images hidden/)
    assert.deepEqual(hits.filter((h) => h.startsWith('/banner')), [], 'the remote image is not fetched before it is asked for')
    assert.deepEqual(await serious(page), [])
    if (width === 1280) await screenshot(page, 'message-content')
    await page.getByRole('button', { name: 'Show remote images' }).click()
    await notice.getByText('Remote images shown.').waitFor()
    await eventually(() => hits.includes(`/banner-${width}.png`), 'the remote image is fetched once asked for')
    assert.match((await frameEl.getAttribute('srcdoc'))!, /content="default-src 'none'; img-src data: http: https:; style-src 'unsafe-inline'; font-src data:">/)
    hits.length = 0
    assert.match((await page.getByTestId('content-text').textContent())!, /^Your parcel is on its way\./)
    assert.match((await page.getByTestId('content-attachments').textContent())!, /invoice-1042-with-a-rather-long-file-name\.pdf.*application\/pdf.*8 B/)
    const o = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }))
    assert.ok(o.scrollWidth <= o.innerWidth, `page is ${o.scrollWidth} px wide in a ${o.innerWidth} px window`)
    const box = (await frameEl.boundingBox())!
    assert.ok(box.x >= 0 && box.x + box.width <= width, `frame at ${box.x}..${box.x + box.width} within ${width}`)
    assert.deepEqual(await serious(page), [])
    await page.close()
  })
}

test('a script in the HTML does not run and nothing remote is fetched (images, styles, backgrounds, refresh); ' +
  'inline styles apply', { skip: missing }, async () => {
  const origin = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`
  const id = await sent({
    subject: 'Hostile',
    html: `<head><meta http-equiv="refresh" content="0;url=${origin}/refresh"><link rel="stylesheet" href="${origin}/css"></head>` +
      `<body><script>document.title = 'script ran'; window.parent.document.title = 'script ran'; fetch('${origin}/fetch')</script>` +
      '<style>#styled { color: rgb(200, 0, 0) }</style><p id="styled">styled</p>' +
      `<p id="hello" style="background: url(${origin}/background)">Hello</p><img src="${origin}/image" alt="remote">` +
      '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="inline"></body>'
  })
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await openMessage(page, id)
  const title = await page.title()
  const frame = await htmlFrame(page)
  assert.equal(await frame.evaluate(() => getComputedStyle(document.getElementById('styled')!).color), 'rgb(200, 0, 0)',
    'inline styles apply')
  assert.equal(await frame.locator('#hello').textContent(), 'Hello', 'the HTML is shown')
  await nothingHappensFor(1500) // a script or remote load, were it allowed, would have run by now
  assert.notEqual(await frame.evaluate(() => document.title), 'script ran')
  assert.equal(await page.title(), title, 'the dashboard\'s title is untouched')
  assert.deepEqual(hits, [], 'no request reached the remote server')
  assert.equal(frame.url(), 'about:srcdoc', 'the frame was not navigated away')

  // The frame's own sandbox and policy hold without the dashboard's Content-Security-Policy around them: the same
  // frame on a page that has none fetches nothing and runs nothing, where the bare HTML fetches and runs.
  const frameEl = page.getByTestId('content-html')
  const [sandbox, srcdoc] = [await frameEl.getAttribute('sandbox'), await frameEl.getAttribute('srcdoc')]
  const bare = await (await browser.newContext()).newPage()
  await bare.goto(`${origin}/bare`)
  hits.length = 0
  const place = async (attrs: { sandbox?: string, srcdoc: string }): Promise<Frame> => {
    const handle = await bare.evaluateHandle((a) => {
      const f = document.createElement('iframe')
      if (a.sandbox !== undefined) f.setAttribute('sandbox', a.sandbox)
      f.srcdoc = a.srcdoc
      document.body.append(f)
      return f
    }, attrs)
    const f = (await handle.asElement()!.contentFrame())!
    await f.waitForLoadState()
    return f
  }
  const shown = await place({ sandbox: sandbox!, srcdoc: srcdoc! })
  await nothingHappensFor(1500) // a fetch or script, were it allowed, would have run by now
  assert.deepEqual(hits, [], 'the dashboard\'s frame fetches nothing on a page without a policy')
  assert.notEqual(await shown.evaluate(() => document.title), 'script ran')
  const content = await ob.request('GET', `/v1/messages/${id}/content`, { key: org.adminKey })
  await place({ srcdoc: content.body.html })
  await eventually(() => (hits as string[]).includes('/image') && (hits as string[]).includes('/fetch'),
    'the bare HTML fetches its image and runs its script', 5000)
  await bare.context().close()
  await page.close()
})

test('before the content is recorded the section says so, and it fills in with the message\'s next event', { skip: missing }, async () => {
  const id = await sent({ subject: 'Later', text: 'Recorded later' })
  // as if the engine had not taken the message up yet: its recorded content is taken away, and put back below
  const jsm = await jetstreamManager(ob.proc.nc)
  const store = new MessageContentStore(jsm, jetstream(ob.proc.nc))
  const recorded = (await store.get(id))!
  await jsm.streams.purge(STREAM_MESSAGE_CONTENT, { filter: messageContentSubject(id) })
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.goto(`${ob.baseUrl}/dashboard#/messages/${id}`)
  await page.getByTestId('content').getByText(/not recorded yet/).waitFor()
  await page.locator('[data-testid="live-state"][data-state="live"]').waitFor()
  await store.put(recorded)
  // a sandbox message's events carry its environment, as the engine stamps them
  await publish(ob, { ...event(org, id, 'opened'), environment: 'test' })
  assert.equal(await page.getByTestId('content-text').textContent(), 'Recorded later')
  await page.close()
})
