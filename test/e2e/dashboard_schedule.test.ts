import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { TestOutbox, type TestOrg } from '../helpers/outbox.ts'
import { browserMissing, launchBrowser, screenshot, signedInPage } from '../helpers/browser.ts'
import { readMessage } from '../helpers/read_after_write.ts'

const missing = browserMissing()
let ob: TestOutbox
let org: TestOrg
let browser: Browser
let key: string

before(async () => {
  if (missing !== undefined) return
  ob = await TestOutbox.start()
  org = await ob.org('pro')
  key = await ob.key(org, ['send', 'read'])
  browser = await launchBrowser()
})
after(async () => {
  await browser?.close()
  await ob?.close()
})

test('a scheduled message is rescheduled and then canceled from its page', { skip: missing }, async () => {
  const at = new Date(Math.floor((Date.now() + 3600_000) / 1000) * 1000)
  const sent = await ob.request('POST', '/v1/messages/send', {
    key,
    body: {
      from: `App <hello@${org.domain}>`, to: 'later@example.net', subject: 'Tomorrow', text: 'Tomorrow', scheduled_at: at.toISOString()
    }
  })
  assert.equal(sent.status, 202, sent.text)
  const id = sent.body.id as string
  assert.equal((await readMessage(ob, id, key)).status, 200)

  const page = await signedInPage(browser, ob.baseUrl, key)
  await page.goto(`${ob.baseUrl}/dashboard#/messages/${id}`)
  const actions = page.getByTestId('schedule-actions')
  await actions.waitFor()
  await screenshot(page, 'scheduled')
  const later = new Date(at.getTime() + 3600_000)
  const local = await page.evaluate((iso) => {
    const d = new Date(iso)
    return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 19)
  }, later.toISOString())
  await page.getByLabel('New time').fill(local)
  await actions.getByRole('button', { name: 'Reschedule' }).click()
  await page.locator('dd time[datetime="' + later.toISOString() + '"]').waitFor()
  assert.equal((await ob.request('GET', `/v1/messages/${id}`, { key })).body.scheduled_at, later.toISOString())

  await actions.getByRole('button', { name: 'Cancel' }).click()
  await actions.waitFor({ state: 'detached' })
  assert.equal((await ob.request('GET', `/v1/messages/${id}`, { key })).body.status, 'canceled')
})
