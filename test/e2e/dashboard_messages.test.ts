import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { TestOutbox, type TestOrg } from '../helpers/outbox.ts'
import { browserMissing, launchBrowser, screenshot, signedInPage } from '../helpers/browser.ts'
import { event, publish, queue } from '../integration/readmodel/fixtures.ts'
import type { EventType } from '../../engine/protocol/mod.ts'

const missing = browserMissing()
let ob: TestOutbox
let org: TestOrg
let browser: Browser
let sandboxKey: string

before(async () => {
  if (missing !== undefined) return
  ob = await TestOutbox.start()
  org = await ob.org('pro')
  sandboxKey = await ob.key(org, ['send', 'read'], 'test')
  browser = await launchBrowser()
})
after(async () => {
  await browser?.close()
  await ob?.close()
})

/**
 * A message to `local@example.net` through the real send path with a sandbox key, whose outcome follows the local
 * part (open: delivered then opened). Before the send route is merged (404/405), the message is recorded and its
 * events are published to OB_EVENTS exactly as the send path and the engine do.
 */
async function sendMessage (local: string, subject: string, outcome: EventType[]): Promise<{ id: string, via: 'api' | 'events' }> {
  const res = await ob.request('POST', '/v1/messages/send', {
    key: sandboxKey,
    body: { from: `Shop <orders@${org.domain}>`, to: `${local}@example.net`, subject, html: '<p>Thanks for your order</p>', metadata: { order: '1042' } }
  })
  if (res.status === 202) return { id: res.body.id as string, via: 'api' }
  assert.ok(res.status === 404 || res.status === 405, `send answered ${res.status}: ${res.text}`)
  const msg = await queue(ob, org, { from: `Shop <orders@${org.domain}>`, to: [`${local}@example.net`], subject, environment: 'test', metadata: { order: '1042' } })
  let at = Date.now()
  for (const type of outcome) {
    const extra: Record<string, unknown> = type === 'delivered' ? { smtp_response: '250 2.0.0 OK (sandbox)' } : type === 'bounced' ? { bounce_type: 'hard', bounce_code: '550', bounce_message: '5.1.1 mailbox unknown' } : type === 'opened' ? { user_agent: 'Mozilla/5.0', ip_address: '203.0.113.7' } : {}
    const e = event(org, msg.id, type, new Date(at += 1000), extra)
    e.data.to = `${local}@example.net`
    await publish(ob, e)
  }
  return { id: msg.id, via: 'events' }
}

test('activity updates live, filters by status, and a message shows its event timeline', { skip: missing }, async (t) => {
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.getByRole('heading', { name: 'Activity' }).waitFor()
  await page.locator('[data-testid="live-state"][data-state="live"]').waitFor()

  // Sent while the page is open: the list and the live feed update without a reload.
  const opened = await sendMessage('open', 'Your order #1042', ['delivered', 'opened'])
  if (opened.via === 'events') t.diagnostic('POST /v1/messages/send is not on this build: messages recorded and their events published to OB_EVENTS')
  await sendMessage('bounce', 'Your invoice', ['bounced'])
  await sendMessage('click', 'Weekly digest', ['delivered'])
  await page.getByTestId('messages').getByRole('link', { name: 'Your order #1042' }).waitFor()
  await page.getByTestId('live-feed').locator('li', { hasText: opened.id }).first().waitFor()
  await page.getByTestId('messages').locator('tr', { hasText: 'Your invoice' }).getByText('bounced').waitFor()
  await screenshot(page, 'activity')

  await page.getByLabel('Status').selectOption('bounced')
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.getByTestId('messages').locator('tr', { hasText: 'Your order #1042' }).waitFor({ state: 'detached' })
  assert.deepEqual(await page.getByTestId('messages').locator('tbody tr td:nth-child(3)').allTextContents(), ['Your invoice'])
  await page.getByLabel('Status').selectOption('')
  await page.getByLabel('Recipient').fill('open@example.net')
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.getByTestId('messages').locator('tr', { hasText: 'Your invoice' }).waitFor({ state: 'detached' })

  await page.getByRole('link', { name: 'Your order #1042' }).click()
  await page.getByRole('heading', { name: `Message ${opened.id}` }).waitFor()
  const timeline = page.getByTestId('timeline')
  await timeline.locator('li[data-type="opened"]').waitFor()
  assert.deepEqual(await timeline.locator('li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-type'))), ['delivered', 'opened'])
  const api = await ob.request('GET', `/v1/messages/${opened.id}`, { key: org.adminKey })
  assert.equal(api.status, 200)
  for (const e of api.body.events as Array<{ id: string }>) await timeline.getByText(e.id).waitFor()
  assert.match(await page.locator('dl.fields').textContent() ?? '', /open@example\.net/)
  await screenshot(page, 'message')

  await page.goto(`${ob.baseUrl}/dashboard#/stats`)
  await page.getByTestId('stats-chart').waitFor()
  assert.match(await page.getByTestId('stats-totals').textContent() ?? '', /delivered2/)
  await screenshot(page, 'stats')
  await page.close()
})
