import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
import { TestOutbox, type TestOrg } from '../helpers/outbox.ts'
import { browserMissing, launchBrowser, screenshot, signedInPage } from '../helpers/browser.ts'

/** The dashboard's Audit log view: the organisation's changes, newest first, filtered by action; manage keys only. */
const missing = browserMissing()
let ob: TestOutbox
let org: TestOrg
let browser: Browser

before(async () => {
  if (missing !== undefined) return
  ob = await TestOutbox.start()
  org = await ob.org('pro')
  browser = await launchBrowser()
  const made = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'reporting', domain_id: org.domainId, permissions: ['read'] }
  })
  assert.equal(made.status, 201, made.text)
  assert.equal((await ob.request('DELETE', `/v1/api-keys/${made.body.id}`, { key: org.adminKey })).status, 204)
  assert.equal((await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'gone@example.net' } })).status, 201)
})
after(async () => {
  await browser?.close()
  await ob?.close()
})

for (const width of [390, 1280]) {
  test(`at ${width} px the audit log lists the changes newest first, filters by action, with no axe finding`, {
    skip: missing
  }, async () => {
    const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
    await page.setViewportSize({ width, height: 800 })
    await page.goto(`${ob.baseUrl}/dashboard#/audit-log`)
    await page.locator('main h1').filter({ hasText: 'Audit log' }).waitFor()
    const rows = page.getByTestId('audit-log').locator('tbody tr')
    await rows.first().waitFor()
    const actions = await rows.locator('td[data-label="Action"]').allTextContents()
    assert.deepEqual(actions, ['suppression.added', 'api_key.revoked', 'api_key.created'])
    assert.match((await rows.first().locator('td[data-label="Target"]').textContent())!, /gone@example\.net/)
    assert.match((await rows.last().locator('td[data-label="By"]').textContent())!, /\(this key\)/)
    await page.getByLabel('Action').fill('api_key.revoked')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="audit-log"] tbody tr').length === 1)
    const fits = await page.evaluate(() => document.scrollingElement!.scrollWidth <= window.innerWidth)
    assert.ok(fits, 'no horizontal page scroll')
    const result = await new AxeBuilder({ page }).analyze()
    const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)
    assert.deepEqual(serious, [])
    if (width === 1280) await screenshot(page, 'audit-log')
    await page.close()
  })
}

test('a key without manage does not see the view in the navigation', { skip: missing }, async () => {
  const reader = await ob.key(org, ['read'])
  const page = await signedInPage(browser, ob.baseUrl, reader)
  await page.goto(`${ob.baseUrl}/dashboard#/activity`)
  await page.locator('main h1').filter({ hasText: 'Activity' }).waitFor()
  assert.equal(await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).count(), 0)
  await page.close()
})
