import { test, before, after, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { TestOutbox, type TestOrg } from '../helpers/outbox.ts'
import { browserMissing, launchBrowser, screenshot, signedInPage } from '../helpers/browser.ts'
import { heldWithin } from '../helpers/waiting.ts'
import { event, publish, queue } from '../integration/readmodel/fixtures.ts'
import type { EventType } from '../../protocol/mod.ts'

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

/** Publishes the events of `outcome` for a message, exactly as the delivery engine does. */
async function publishOutcome (id: string, local: string, outcome: EventType[]): Promise<void> {
  let at = Date.now()
  for (const type of outcome) {
    const extra: Record<string, unknown> = type === 'delivered'
      ? { smtp_response: '250 2.0.0 OK (sandbox)' }
      : type === 'bounced'
        ? { bounce_type: 'hard', bounce_code: '550', bounce_message: '5.1.1 mailbox unknown' }
        : type === 'opened' ? { user_agent: 'Mozilla/5.0', ip_address: '203.0.113.7' } : {}
    const e = event(org, id, type, new Date(at += 1000), extra)
    e.data.to = `${local}@example.net`
    await publish(ob, e)
  }
}

/**
 * A message to `local@example.net` through the real send path with a sandbox key; its outcome follows the local
 * part (open: delivered then opened; bounce: bounced; click: delivered then clicked). Where this build lacks a part,
 * the test stands in for it, saying so: without the send route (404/405) the message is recorded as the send path
 * records it; without the delivery engine (no event within 5 s) its events are published to OB_EVENTS as the
 * engine publishes them.
 */
async function sendMessages (t: TestContext, list: Array<{ local: string, subject: string, outcome: EventType[] }>): Promise<string[]> {
  const ids: string[] = []
  const sent: Array<{ id: string, local: string, outcome: EventType[] }> = []
  for (const { local, subject, outcome } of list) {
    const res = await ob.request('POST', '/v1/messages/send', {
      key: sandboxKey,
      body: {
        from: `Shop <orders@${org.domain}>`, to: `${local}@example.net`, subject, html: '<p>Thanks for your order</p>',
        metadata: { order: '1042' }, tags: [local]
      }
    })
    if (res.status === 202) { ids.push(res.body.id as string); sent.push({ id: res.body.id as string, local, outcome }); continue }
    assert.ok(res.status === 404 || res.status === 405, `send answered ${res.status}: ${res.text}`)
    const msg = await queue(ob, org, {
      from: `Shop <orders@${org.domain}>`, to: [`${local}@example.net`], subject, environment: 'test',
      metadata: { order: '1042' }, tags: [local]
    })
    await publishOutcome(msg.id, local, outcome)
    ids.push(msg.id)
  }
  if (sent.length < list.length) t.diagnostic('POST /v1/messages/send is not on this build: messages recorded directly')
  const waiting = new Set(sent)
  const noneWaiting = async (): Promise<boolean> => {
    for (const m of waiting) {
      const r = await ob.request('GET', `/v1/messages/${m.id}`, { key: org.adminKey })
      if (r.status === 200 && (r.body.events as unknown[]).length > 0) waiting.delete(m)
    }
    return waiting.size === 0
  }
  // up to 5 s for the engine's events; a build without an engine gets them published below instead
  await heldWithin(noneWaiting, 5000, 100)
  if (waiting.size > 0) {
    t.diagnostic('no delivery event within 5 s (the delivery engine is not on this build): events published to OB_EVENTS')
  }
  for (const m of waiting) await publishOutcome(m.id, m.local, m.outcome)
  return ids
}

test('activity updates live, filters by status, and a message shows its event timeline', { skip: missing }, async (t) => {
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.getByRole('heading', { name: 'Activity' }).waitFor()
  await page.locator('[data-testid="live-state"][data-state="live"]').waitFor()
  // Sandbox traffic stays out of the default (live) view: the switch shows it.
  await page.getByLabel('Environment').selectOption('test')

  // Sent while the page is open: events refresh the list and appear in the live feed without a reload.
  const [opened] = await sendMessages(t, [
    { local: 'open', subject: 'Your order #1042', outcome: ['delivered', 'opened'] },
    { local: 'bounce', subject: 'Your invoice', outcome: ['bounced'] },
    { local: 'click', subject: 'Weekly digest', outcome: ['delivered'] }
  ])
  await page.getByTestId('messages').getByRole('link', { name: 'Your order #1042' }).waitFor()
  await page.getByTestId('live-feed').locator('li', { hasText: opened }).first().waitFor()
  await page.getByTestId('messages').locator('tr', { hasText: 'Your invoice' }).getByText('bounced').waitFor()
  await page.getByTestId('messages').locator('tr', { hasText: 'Your order #1042' }).getByText('1 of 1 delivered').waitFor()
  await page.getByLabel('Environment').selectOption('live')
  await page.getByTestId('messages').getByText('No messages match.').waitFor()
  await page.getByLabel('Environment').selectOption('test')
  await page.getByTestId('messages').getByRole('link', { name: 'Your invoice' }).waitFor()
  await screenshot(page, 'activity')

  await page.getByLabel('Status').selectOption('bounced')
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.getByTestId('messages').locator('tr', { hasText: 'Your order #1042' }).waitFor({ state: 'detached' })
  assert.deepEqual(await page.getByTestId('messages').locator('tbody tr td:nth-child(3)').allTextContents(), ['Your invoice'])
  await page.getByLabel('Status').selectOption('')
  await page.getByLabel('Tag').fill('click')
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.getByTestId('messages').locator('tr', { hasText: 'Your invoice' }).waitFor({ state: 'detached' })
  assert.deepEqual(await page.getByTestId('messages').locator('tbody tr td:nth-child(3)').allTextContents(), ['Weekly digest'])
  await page.getByLabel('Tag').fill('')
  await page.getByLabel('Recipient').fill('open@example.net')
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.getByTestId('messages').locator('tr', { hasText: 'Your invoice' }).waitFor({ state: 'detached' })

  await page.getByRole('link', { name: 'Your order #1042' }).click()
  await page.getByRole('heading', { name: `Message ${opened}` }).waitFor()
  const timeline = page.getByTestId('timeline')
  await timeline.locator('li[data-type="opened"]').waitFor()
  assert.deepEqual(await timeline.locator('li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-type'))),
    ['delivered', 'opened'])
  const api = await ob.request('GET', `/v1/messages/${opened}`, { key: org.adminKey })
  assert.equal(api.status, 200)
  for (const e of api.body.events as Array<{ id: string }>) await timeline.getByText(e.id).waitFor()
  assert.match(await page.locator('dl.fields').textContent() ?? '', /open@example\.net/)
  assert.match(await page.locator('dl.fields').textContent() ?? '', /tagsopenrecipient_count/)
  const recipient = page.getByTestId('recipients').locator('tr', { hasText: 'open@example.net' })
  await recipient.getByText('delivered').waitFor()
  await screenshot(page, 'message')

  await page.goto(`${ob.baseUrl}/dashboard#/stats`)
  await page.getByTestId('stats-chart').first().waitFor()
  assert.match(await page.getByTestId('stats-totals').textContent() ?? '', /delivered0/, 'sandbox traffic is not counted in the live view')
  await page.getByLabel('Environment').selectOption('test')
  await page.getByTestId('stats-totals').getByText('2', { exact: true }).first().waitFor()
  assert.match(await page.getByTestId('stats-totals').textContent() ?? '', /delivered2/)
  // Rates over the range: bounces over delivered + bounced; complaints, opens and clicks over delivered.
  const counts = Object.fromEntries(await page.getByTestId('stats-totals').evaluate((dl) =>
    [...dl.querySelectorAll('dt')].map((dt) => [dt.textContent, Number(dt.nextElementSibling!.textContent)]))) as Record<string, number>
  const pct = (n: number, of: number): string => of === 0 ? '—' : `${Math.round((n / of) * 1000) / 10} %`
  const shownRates = await page.getByTestId('rate-totals').textContent()
  assert.equal(shownRates, `bounce rate${pct(counts.bounced!, counts.delivered! + counts.bounced!)}` +
    `complaint rate${pct(counts.complained!, counts.delivered!)}open rate${pct(counts.opened!, counts.delivered!)}` +
    `click rate${pct(counts.clicked!, counts.delivered!)}`)
  assert.ok(counts.opened! > 0 && !shownRates!.includes('open rate—'), 'an open rate is shown')
  assert.equal(await page.getByTestId('stats-rates').getByTestId('stats-chart').count(), 1, 'rates per hour are charted')
  await screenshot(page, 'stats')
  await page.close()
})
