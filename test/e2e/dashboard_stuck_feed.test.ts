import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Browser, Page } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
import { ServerProcess } from '../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../helpers/outbox.ts'
import { SmtpSink } from '../helpers/smtp_sink.ts'
import { browserMissing, launchBrowser, screenshot, signedInPage } from '../helpers/browser.ts'
import { eventually } from '../helpers/waiting.ts'

// A gateway with a one-second grace before a message reads as stuck, and an engine that can be stopped: a message
// deferred (451) while it runs waits for a retry no one makes once it is stopped.
const missing = browserMissing()
let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let gateway: TestOutbox
let engine: TestOutbox | undefined
let org: TestOrg
let sandboxKey: string

async function startEngine (): Promise<TestOutbox> {
  return await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'engine', OB_SMTP_RELAY: sink.url, OB_DELIVERY_RETRY_SCHEDULE: '3,600' } })
}

let browser: Browser
before(async () => {
  if (missing !== undefined) return
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start({ tempfailTimes: 1 })
  gateway = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway', OB_STUCK_AFTER_MS: '1000' } })
  engine = await startEngine()
  org = await gateway.org('pro')
  sandboxKey = await gateway.key(org, ['send', 'read'], 'test')
  browser = await launchBrowser()
})
after(async () => {
  await browser?.close()
  await engine?.close()
  await gateway?.close()
  await sink?.close()
  await nats?.dispose()
  await redis?.dispose()
})

async function send (key: string, to: string, subject: string): Promise<string> {
  const r = await gateway.request('POST', '/v1/messages/send', {
    key, body: { from: `Shop <orders@${org.domain}>`, to, subject, text: 'hello' }
  })
  assert.equal(r.status, 202, r.text)
  return (r.body as { id: string }).id
}

async function message (id: string): Promise<any> {
  return (await gateway.request('GET', `/v1/messages/${id}`, { key: org.adminKey })).body
}

async function axeProblems (page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze()
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`)
}

test('a stuck message shows a Stuck badge in Activity and says on its page ' +
  'when its attempt was due', { skip: missing, timeout: 120_000 }, async () => {
  const fine = await send(org.adminKey, 'someone@dest.example', 'Delivered fine')
  const id = await send(org.adminKey, 'tempfail-stuck@dest.example', 'Held up')
  await eventually(async () => (await message(id)).status === 'deferred' && (await message(fine)).status === 'delivered', 'deferred')
  await engine!.close()
  engine = undefined
  await eventually(async () => (await message(id)).stuck === true, 'stuck')
  const due = (await message(id)).next_attempt_at as string

  for (const width of [390, 1280]) {
    const page = await signedInPage(browser, gateway.baseUrl, org.adminKey)
    await page.setViewportSize({ width, height: 800 })
    await page.getByRole('heading', { name: 'Activity' }).waitFor()
    const row = page.getByTestId('messages').locator('tr', { hasText: 'Held up' })
    await row.getByText('Stuck', { exact: true }).waitFor()
    const badge = (await row.getByText('Stuck', { exact: true }).boundingBox())!
    assert.ok(badge.x >= 0 && badge.x + badge.width <= width, `Stuck badge within ${width} px`)
    const fineRow = page.getByTestId('messages').locator('tr', { hasText: 'Delivered fine' })
    assert.equal(await fineRow.getByText('Stuck', { exact: true }).count(), 0)
    await page.getByLabel('Stuck only').check()
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.getByTestId('messages').locator('tr', { hasText: 'Delivered fine' }).waitFor({ state: 'detached' })
    assert.deepEqual(await page.getByTestId('messages').locator('tbody tr td:nth-child(3)').allTextContents(), ['Held up'])
    assert.deepEqual(await axeProblems(page), [], `Activity at ${width} px`)

    await row.getByRole('link', { name: 'Held up' }).click()
    await page.getByRole('heading', { name: `Message ${id}` }).waitFor()
    const notice = page.getByTestId('stuck')
    await notice.waitFor()
    if (width === 1280) await screenshot(page, 'stuck')
    assert.match(await notice.textContent() ?? '', /^Stuck The next delivery attempt was due at .+ and has not happened/)
    assert.equal(await notice.locator('time').first().getAttribute('datetime'), due)
    // What to check: the last attempt's reply as the receiver gave it, the destination, the engine and its queue.
    const deferral = ((await message(id)).events as Array<{ type: string, data: { smtp_response: string } }>)
      .filter((e) => e.type === 'deferred').at(-1)!
    assert.equal(await notice.getByTestId('last-reply').textContent(), deferral.data.smtp_response)
    assert.match(deferral.data.smtp_response, /^4\d\d/)
    const checks = await notice.locator('ul.checks li').allTextContents()
    assert.equal(checks.length, 3)
    assert.match(checks[0]!, /^The last attempt: at .+ the receiving server answered 4\d\d/)
    assert.match(checks[1]!, /^The destination: dest\.example\. .+docs\/delivery\.md, “Destinations that keep answering 4xx”/)
    assert.match(checks[2]!, /^The engine and its queue: .+readiness check.+outbox_jetstream_consumer_pending.+docs\/reading\.md, “Stuck messages”/)
    const readyz = await page.request.get(new URL((await notice.getByTestId('readyz').getAttribute('href'))!, page.url()).href)
    assert.deepEqual(Object.keys((await readyz.json() as { checks: object }).checks).sort(), ['nats', 'queue', 'redis'],
      'the readiness check it links to names NATS, Redis and the queue')
    assert.deepEqual(await axeProblems(page), [], `message page at ${width} px`)
    const o = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }))
    assert.ok(o.scrollWidth <= o.innerWidth, `no horizontal scroll at ${width} px`)
    await page.close()
  }

  engine = await startEngine()
  await eventually(async () => (await message(id)).status === 'delivered', 'delivered after the restart', 40_000)
  const page = await signedInPage(browser, gateway.baseUrl, org.adminKey)
  await page.goto(`${gateway.baseUrl}/dashboard#/messages/${id}`)
  await page.getByTestId('timeline').locator('li[data-type="delivered"]').waitFor()
  assert.equal(await page.getByTestId('stuck').count(), 0, 'no longer flagged once delivered')
  await page.close()
})

test('the live feed follows the environment switch: sandbox sends only in test, ' +
  'live ones only in live', { skip: missing, timeout: 60_000 }, async () => {
  engine ??= await startEngine()
  const page = await signedInPage(browser, gateway.baseUrl, org.adminKey)
  await page.getByRole('heading', { name: 'Activity' }).waitFor()
  await page.locator('[data-testid="live-state"][data-state="live"]').waitFor()
  const feed = page.getByTestId('live-feed')

  const hidden = await send(sandboxKey, 'someone@example.net', 'Sandbox while live')
  const live = await send(org.adminKey, 'reader@dest.example', 'Live one')
  await feed.locator('li', { hasText: live }).first().waitFor()
  await eventually(async () => (await message(hidden)).status === 'delivered', 'sandbox delivered')
  await new Promise((resolve) => setTimeout(resolve, 500))
  assert.equal(await feed.locator('li', { hasText: hidden }).count(), 0, 'no sandbox event in the live feed')

  await page.getByLabel('Environment').selectOption('test')
  await page.getByTestId('messages').getByRole('link', { name: 'Sandbox while live' }).waitFor()
  const shown = await send(sandboxKey, 'someone@example.net', 'Sandbox while test')
  await feed.locator('li', { hasText: shown }).first().waitFor()
  assert.equal(await feed.locator('li', { hasText: live }).count(), 0, 'live events left the feed with the switch')
  const another = await send(org.adminKey, 'reader2@dest.example', 'Live while test')
  await eventually(async () => (await message(another)).status === 'delivered', 'live delivered')
  await new Promise((resolve) => setTimeout(resolve, 500))
  assert.equal(await feed.locator('li', { hasText: another }).count(), 0, 'no live event in the test feed')
  await page.close()
})

test('a sandbox message\'s page is refreshed by its events: ' +
  'the feed takes the message\'s environment', { skip: missing, timeout: 60_000 }, async () => {
  engine ??= await startEngine()
  const page = await signedInPage(browser, gateway.baseUrl, org.adminKey) // Activity, live
  // `softbounce`: deferred at once, bounced 2 s later (the sandbox's retry schedule).
  const id = await send(sandboxKey, 'softbounce@example.net', 'Sandbox soft bounce')
  await eventually(async () => (await message(id))?.status === 'deferred', 'deferred', 10_000)
  await page.goto(`${gateway.baseUrl}/dashboard#/messages/${id}`)
  const timeline = page.getByTestId('timeline')
  await timeline.locator('li[data-type="deferred"]').waitFor()
  await timeline.locator('li[data-type="bounced"]').waitFor({ timeout: 15_000 })
  await page.close()
})
