import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
import { TestOutbox, type TestOrg } from '../helpers/outbox.ts'
import { browserMissing, launchBrowser, screenshot, signedInPage } from '../helpers/browser.ts'

const missing = browserMissing()
let ob: TestOutbox
let browser: Browser

before(async () => {
  if (missing !== undefined) return
  ob = await TestOutbox.start()
  browser = await launchBrowser()
})
after(async () => {
  await browser?.close()
  await ob?.close()
})

async function axeProblems (page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze()
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`)
}

for (const width of [390, 1280]) {
  test(`at ${width} px: a pasted import shows its report beside the form, filters narrow the list, export downloads the CSV`,
    { skip: missing }, async () => {
      const org: TestOrg = await ob.org()
      const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
      await page.setViewportSize({ width, height: 900 })
      await page.goto(`${ob.baseUrl}/dashboard#/suppressions`)
      await page.getByText('No suppressed addresses.').waitFor()

      await page.getByLabel('Or paste the list').fill(
        'email,reason\nfirst@dash.example,unsubscribe\nsecond@dash.example,complaint\nnot-an-address,\n')
      await page.getByRole('button', { name: 'Import' }).click()
      const report = page.getByTestId('import-report')
      await report.getByText('2 imported, 0 already suppressed, 1 refused.').waitFor()
      await report.locator('tr', { hasText: 'not-an-address' }).getByText('email is not an address').waitFor()
      const form = page.locator('form', { has: page.getByRole('button', { name: 'Import' }) })
      assert.equal(await form.getByTestId('import-report').count(), 1, 'the report is shown in the import form')
      await page.getByTestId('suppressions').locator('tr', { hasText: 'second@dash.example' }).waitFor()

      await page.getByLabel('Reason').selectOption('complaint')
      await page.waitForFunction(() => !document.querySelector('[data-testid="suppressions"]')?.textContent?.includes('first@dash.example'))
      await page.getByTestId('suppressions').locator('tr', { hasText: 'second@dash.example' }).waitFor()

      const download = page.waitForEvent('download')
      await page.getByRole('button', { name: 'Export CSV' }).click()
      const file = await (await download).path()
      const rows = readFileSync(file, 'utf8').trim().split('\n')
      assert.equal(rows[0], 'email,reason,created_at,expires_at,message_id,stream')
      const shown = rows.slice(1).map((r) => r.split(',').slice(0, 2).join(','))
      assert.deepEqual(shown, ['second@dash.example,complaint'], 'the filter applies')

      const o = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }))
      assert.ok(o.scrollWidth <= o.innerWidth, `page is ${o.scrollWidth} px wide in a ${o.innerWidth} px window`)
      assert.deepEqual(await axeProblems(page), [])
      await screenshot(page, `suppressions-${width}`)

      const refused = await ob.request('GET', '/v1/suppressions', { key: (await ob.org()).adminKey })
      assert.deepEqual(refused.body.data, [], 'another organisation sees none of it')
      await page.close()
    })
}
