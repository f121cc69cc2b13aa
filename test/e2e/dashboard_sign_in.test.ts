import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { TestOutbox, type TestOrg } from '../helpers/outbox.ts'
import { browserMissing, launchBrowser, signedInPage } from '../helpers/browser.ts'

const missing = browserMissing()
let ob: TestOutbox
let org: TestOrg
let browser: Browser

before(async () => {
  if (missing !== undefined) return
  ob = await TestOutbox.start()
  org = await ob.org('pro')
  browser = await launchBrowser()
})
after(async () => {
  await browser?.close()
  await ob?.close()
})

test('the gateway serves the dashboard with content types and cache headers', { skip: missing }, async () => {
  const index = await ob.request('GET', '/dashboard')
  assert.equal(index.status, 200)
  assert.match(index.headers.get('content-type') ?? '', /^text\/html/)
  assert.equal(index.headers.get('cache-control'), 'no-cache')
  const asset = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(index.text)?.[1]
  assert.ok(asset !== undefined, 'index.html references a script')
  const js = await ob.request('GET', asset)
  assert.equal(js.status, 200)
  assert.match(js.headers.get('content-type') ?? '', /javascript/)
  assert.match(js.headers.get('cache-control') ?? '', /immutable/)
  const none = await ob.request('GET', '/dashboard/assets/nope.js')
  assert.equal(none.status, 404)
  assert.equal(none.body.error.code, 'not_found')
})

test('a bad key shows the API 401 message; a good key signs in', { skip: missing }, async () => {
  const page = await browser.newPage()
  await page.goto(`${ob.baseUrl}/dashboard`)
  await page.getByLabel('API key').fill('ob_live_notarealkey000000000000')
  await page.getByRole('button', { name: 'Sign in' }).click()
  const alert = page.getByRole('alert')
  await alert.waitFor()
  const api = await ob.request('GET', '/v1/whoami', { key: 'ob_live_notarealkey000000000000' })
  assert.equal(api.status, 401)
  assert.equal(await alert.locator('.error-message').textContent(), api.body.error.message, 'the API words it')
  assert.match(await alert.textContent() ?? '', /401 unauthorized/)
  await page.getByLabel('API key').fill(org.adminKey)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Activity' }).waitFor()
  assert.equal(await page.evaluate(() => sessionStorage.getItem('outbox.dashboard.key')), org.adminKey)
  assert.equal(await page.evaluate(() => localStorage.length), 0, 'nothing in localStorage')
  await page.reload()
  await page.getByRole('heading', { name: 'Activity' }).waitFor()
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByLabel('API key').waitFor()
  assert.equal(await page.evaluate(() => sessionStorage.getItem('outbox.dashboard.key')), null)
  await page.close()
})

test('a read-only key sees no management views or actions', { skip: missing }, async () => {
  const page = await signedInPage(browser, ob.baseUrl, await ob.key(org, ['read']))
  await page.getByRole('heading', { name: 'Activity' }).waitFor()
  const navLinks = await page.locator('#nav a').allTextContents()
  assert.deepEqual(navLinks, ['Activity', 'Statistics', 'Suppressions', 'Streams'])
  await page.goto(`${ob.baseUrl}/dashboard#/suppressions`)
  await page.getByRole('heading', { name: 'Suppressions' }).waitFor()
  assert.equal(await page.getByRole('button', { name: 'Suppress' }).count(), 0)
  await page.goto(`${ob.baseUrl}/dashboard#/streams`)
  await page.getByTestId('streams').locator('tbody tr').first().waitFor()
  assert.equal(await page.locator('main form, main button').count(), 0, 'streams: listed, no forms or buttons')
  for (const view of ['keys', 'webhooks', 'domains', 'inbound']) {
    await page.goto(`${ob.baseUrl}/dashboard#/${view}`)
    await page.getByText('lacks the manage permission').waitFor()
    assert.equal(await page.locator('main form, main button').count(), 0, `${view}: no forms or buttons`)
  }
  await page.close()
})

test('a manage-only key signs in to the management views; a send-only key gets the API 403 message', { skip: missing }, async () => {
  const manager = await signedInPage(browser, ob.baseUrl, await ob.key(org, ['manage']))
  await manager.getByRole('heading', { name: 'API keys' }).waitFor()
  assert.deepEqual(await manager.locator('#nav a').allTextContents(),
    ['Webhooks', 'API keys', 'Templates', 'Domains', 'Inbound', 'Audit log'])
  await manager.close()

  const sendOnly = await ob.key(org, ['send'])
  const page = await browser.newPage()
  await page.goto(`${ob.baseUrl}/dashboard`)
  await page.getByLabel('API key').fill(sendOnly)
  await page.getByRole('button', { name: 'Sign in' }).click()
  const alert = page.getByRole('alert')
  await alert.waitFor()
  const api = await ob.request('GET', '/v1/whoami', { key: sendOnly })
  assert.equal(api.status, 403)
  assert.equal(await alert.locator('.error-message').textContent(), api.body.error.message)
  await page.close()
})
