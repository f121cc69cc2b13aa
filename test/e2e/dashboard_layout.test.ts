import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Browser, Page } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
import { TestOutbox, type TestOrg } from '../helpers/outbox.ts'
import { browserMissing, launchBrowser, screenshot, signedInPage } from '../helpers/browser.ts'

const missing = browserMissing()
let ob: TestOutbox
let org: TestOrg
let browser: Browser
let messageId: string
let webhookId: string

before(async () => {
  if (missing !== undefined) return
  ob = await TestOutbox.start({ env: { OB_WEBHOOK_ALLOW_PRIVATE: 'true' } })
  org = await ob.org('pro')
  browser = await launchBrowser()
  // Long values in every table, as real data has them.
  const sandbox = await ob.key(org, ['send', 'read'], 'test')
  const sent = await ob.request('POST', '/v1/messages/send', {
    key: sandbox,
    body: {
      from: `Order confirmations <orders@${org.domain}>`,
      to: ['a-rather-long-recipient-name@subdomain.example.net', 'second.person@example.net'],
      subject: 'Your order 1042 has shipped and is on its way to the address you gave us',
      html: '<p>Hi</p>'
    }
  })
  assert.equal(sent.status, 202, sent.text)
  messageId = sent.body.id
  const hook = await ob.request('POST', '/v1/webhooks', { key: org.adminKey, body: { url: 'https://127.0.0.1:9/a/rather/long/path/for/the/outbox/events/receiver', events: ['delivered', 'bounced', 'opened', 'clicked'] } })
  assert.equal(hook.status, 201, hook.text)
  webhookId = hook.body.id
  await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'someone.who.unsubscribed.long.ago@example.net' } })
  await ob.request('POST', '/v1/inbound/routes', {
    key: org.adminKey, body: { match: `support@${org.domain}`, action: { type: 'webhook', include_attachments: false } }
  })
  await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name: `newsletters-and-receipts.${org.domain}` } })
})
after(async () => {
  await browser?.close()
  await ob?.close()
})

const VIEWS = (): Array<{ hash: string, heading: RegExp }> => [
  { hash: '#/activity', heading: /^Activity$/ },
  { hash: `#/messages/${messageId}`, heading: /^Message / },
  { hash: '#/stats', heading: /^Statistics$/ },
  { hash: '#/suppressions', heading: /^Suppressions$/ },
  { hash: '#/webhooks', heading: /^Webhooks$/ },
  { hash: `#/webhooks/${webhookId}`, heading: /^Webhook / },
  { hash: '#/keys', heading: /^API keys$/ },
  { hash: '#/templates', heading: /^Templates$/ },
  { hash: '#/domains', heading: /^Domains$/ },
  { hash: '#/inbound', heading: /^Inbound routes$/ },
  { hash: '#/streams', heading: /^Message streams$/ },
  { hash: '#/audit-log', heading: /^Audit log$/ },
  { hash: '#/nowhere', heading: /^Not found$/ }
]

async function open (page: Page, hash: string, heading: RegExp): Promise<void> {
  await page.goto(`${ob.baseUrl}/dashboard${hash}`)
  await page.locator('main h1').filter({ hasText: heading }).waitFor()
  await page.waitForFunction(() => document.querySelector('main .loading') === null)
}

/** Serious and critical axe-core findings (WCAG 2.1 A and AA rules and best practices), as readable lines. */
async function axeProblems (page: Page): Promise<string[]> {
  // The template preview frame is sandboxed with no scripts (it shows the sender's HTML), so axe cannot run in it
  // and would wait for it for ever; its content is the sender's, not the dashboard's.
  const result = await new AxeBuilder({ page }).exclude('iframe.preview').analyze()
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`)
}

async function overflow (page: Page): Promise<{ scrollWidth: number, innerWidth: number }> {
  return await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }))
}

for (const width of [360, 390, 1280]) {
  test(`at ${width} px every view fits the width (no horizontal page scroll) ` +
    'and has no serious or critical axe finding', { skip: missing }, async () => {
    const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
    await page.setViewportSize({ width, height: 800 })
    const problems: string[] = []
    const signInContext = await browser.newContext({ viewport: { width, height: 800 } })
    const signIn = await signInContext.newPage()
    await signIn.goto(`${ob.baseUrl}/dashboard`)
    await signIn.getByLabel('API key').waitFor()
    const views = [{ page: signIn, name: 'sign-in' }]
    for (const v of VIEWS()) {
      await open(page, v.hash, v.heading)
      const o = await overflow(page)
      if (o.scrollWidth > o.innerWidth) problems.push(`${v.hash}: page is ${o.scrollWidth} px wide in a ${o.innerWidth} px window`)
      for (const p of await axeProblems(page)) problems.push(`${v.hash}: ${p}`)
      if (width === 390 && v.hash === '#/activity') await screenshot(page, 'activity-390')
    }
    for (const v of views) {
      const o = await overflow(v.page)
      if (o.scrollWidth > o.innerWidth) problems.push(`${v.name}: page is ${o.scrollWidth} px wide`)
      for (const p of await axeProblems(v.page)) problems.push(`${v.name}: ${p}`)
    }
    assert.deepEqual(problems, [])
    await signInContext.close()
    await page.close()
  })
}

for (const width of [390, 1280]) {
  test(`at ${width} px a table row keeps its status and actions in view`, { skip: missing }, async () => {
    const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
    await page.setViewportSize({ width, height: 800 })
    await open(page, '#/activity', /^Activity$/)
    // the message of `before` was sent with a sandbox key
    await page.getByLabel('Environment').selectOption('test')
    const status = page.getByTestId('messages').locator('tr', { hasText: messageId }).locator('.badge')
    await status.waitFor()
    const box = (await status.boundingBox())!
    assert.ok(box.x >= 0 && box.x + box.width <= width, `status badge at ${box.x}..${box.x + box.width} within ${width}`)
    await open(page, '#/keys', /^API keys$/)
    const rotate = page.getByRole('button', { name: 'Rotate' }).first()
    const r = (await rotate.boundingBox())!
    assert.ok(r.x >= 0 && r.x + r.width <= width, `Rotate at ${r.x}..${r.x + r.width} within ${width}`)
    await page.close()
  })

  test(`at ${width} px "Skip to content" moves focus to the content and stays on the page; ` +
    'navigating moves focus to the new heading', { skip: missing }, async () => {
    const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
    await page.setViewportSize({ width, height: 800 })
    await open(page, '#/stats', /^Statistics$/)
    await page.reload()
    await page.locator('main h1').filter({ hasText: 'Statistics' }).waitFor()
    await page.keyboard.press('Tab')
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content')
    await page.keyboard.press('Enter')
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'main')
    assert.equal(await page.evaluate(() => location.hash), '#/stats')
    assert.equal(await page.locator('main h1').textContent(), 'Statistics', 'still the same view, not "Not found"')
    await page.keyboard.press('Tab')
    assert.ok(await page.evaluate(() => document.getElementById('main')!.contains(document.activeElement)),
      'the next Tab stop is inside the content')

    await page.getByRole('navigation').getByRole('link', { name: 'Suppressions' }).click()
    await page.locator('main h1').filter({ hasText: 'Suppressions' }).waitFor()
    await page.waitForFunction(() => document.activeElement?.tagName === 'H1')
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Suppressions')
    await page.goBack()
    await page.locator('main h1').filter({ hasText: 'Statistics' }).waitFor()
    await page.waitForFunction(() => document.activeElement?.textContent === 'Statistics')
    await page.close()
  })
}
