import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Browser, Page } from 'playwright-core'
import type { Transporter } from 'nodemailer'
import { AxeBuilder } from '@axe-core/playwright'
import { TestOutbox, type TestOrg } from '../helpers/outbox.ts'
import { browserMissing, launchBrowser, screenshot, signedInPage } from '../helpers/browser.ts'
import { inboundClient } from '../helpers/inbound.ts'
import { googleReport, gzipOf, reportMail, type ReportRow } from '../helpers/dmarc_reports.ts'

const missing = browserMissing()
let ob: TestOutbox
let org: TestOrg
let browser: Browser
let smtp: Transporter

const DAY_S = 86_400
const BEGIN = Math.floor(Date.now() / 1000 / DAY_S) * DAY_S - DAY_S
const DATE = new Date(BEGIN * 1000).toISOString().slice(0, 10)

before(async () => {
  if (missing !== undefined) return
  ob = await TestOutbox.start()
  org = await ob.org('pro')
  browser = await launchBrowser()
  smtp = inboundClient(ob)
  const row = (ip: string, count: number, ok: boolean): ReportRow => ({
    ip, count, dkim: ok ? 'pass' : 'fail', spf: ok ? 'pass' : 'fail',
    dkimResult: { domain: org.domain, result: ok ? 'pass' : 'fail' },
    spfResult: { domain: `bounces.${org.domain}`, result: ok ? 'pass' : 'fail' }
  })
  const rua = `dmarc@bounces.${org.domain}`
  const send = async (reportId: string, begin: number, rows: ReportRow[]): Promise<void> => {
    await smtp.sendMail({
      envelope: { from: 'noreply-dmarc-support@google.com', to: [rua] },
      raw: reportMail({
        from: 'noreply-dmarc-support@google.com', to: rua, subject: 'Report domain', filename: 'report.xml.gz',
        contentType: 'application/gzip', data: gzipOf(googleReport({ domain: org.domain, reportId, begin, rows }))
      })
    })
  }
  await send('e2e-0', BEGIN - DAY_S, [row('203.0.113.10', 10, true)])
  await send('e2e-1', BEGIN, [row('2001:db8:4860:4864::1a', 1200, true), row('198.51.100.7', 4, false)])
})
after(async () => {
  smtp?.close()
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
  test(`at ${width} px a domain's DMARC reports show per day, fit the width, and have no serious axe finding`, {
    skip: missing
  }, async () => {
    const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
    await page.setViewportSize({ width, height: 800 })
    await page.goto(`${ob.baseUrl}/dashboard#/domains`)
    await page.locator(`article[data-domain="${org.domain}"]`).getByRole('link', { name: `DMARC reports of ${org.domain}` }).click()
    await page.locator('main h1').filter({ hasText: `DMARC reports: ${org.domain}` }).waitFor()
    const day = page.locator(`article[data-day="${DATE}"]`)
    await day.waitFor()
    assert.deepEqual(await page.locator('article[data-day]').evaluateAll((els) => els.map((e) => e.getAttribute('data-day'))),
      [DATE, new Date((BEGIN - DAY_S) * 1000).toISOString().slice(0, 10)], 'one card per day, newest first')
    const text = (await day.textContent()) ?? ''
    assert.match(text, /1 report/)
    assert.match(text, /Messages\s*1204/)
    assert.match(text, /DMARC pass\s*1200 \(99%\)/, '100% only when all passed')
    assert.match(text, /google\.com \(1\)/)
    assert.ok((await day.locator('td').allTextContents()).some((t) => t.includes('2001:db8:4860:4864::1a')), 'the IPv6 source is listed')
    assert.ok(await page.getByText(`mailto:dmarc@bounces.${org.domain}`).isVisible())
    const o = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }))
    assert.ok(o.scrollWidth <= o.innerWidth, `page is ${o.scrollWidth} px wide in a ${o.innerWidth} px window`)
    assert.deepEqual(await axeProblems(page), [])
    if (width === 1280) await screenshot(page, 'domain-dmarc')
    await page.close()
  })
}
