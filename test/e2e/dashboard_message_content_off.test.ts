import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { TestOutbox, type TestOrg } from '../helpers/outbox.ts'
import { browserMissing, launchBrowser, signedInPage } from '../helpers/browser.ts'
import { event, publish } from '../integration/readmodel/fixtures.ts'
import { eventually } from '../helpers/waiting.ts'

// An installation that records no message content (OB_MESSAGE_CONTENT_RETENTION_DAYS=0): the message page says
// so where the content would be, as a note and not an error, and does not ask again on the message's events.
const missing = browserMissing()
let ob: TestOutbox
let org: TestOrg
let browser: Browser

before(async () => {
  if (missing !== undefined) return
  ob = await TestOutbox.start({ env: { OB_MESSAGE_CONTENT_RETENTION_DAYS: '0' } })
  org = await ob.org('pro')
  browser = await launchBrowser()
})
after(async () => {
  await browser?.close()
  await ob?.close()
})

test('the Content section says the installation records no content, is no error, ' +
  'and is not asked again on the next event', { skip: missing }, async () => {
  const sandboxKey = await ob.key(org, ['send', 'read'], 'test')
  const r = await ob.request('POST', '/v1/messages/send', {
    key: sandboxKey, body: { from: `Shop <orders@${org.domain}>`, to: 'delivered@simulator.test', subject: 'Receipt', text: 'Thanks' }
  })
  assert.equal(r.status, 202, r.text)
  const id = r.body.id as string
  await eventually(async () => (await ob.request('GET', `/v1/messages/${id}`, { key: org.adminKey })).body?.status === 'delivered',
    'delivered')

  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  const contentRequests: string[] = []
  page.on('request', (req) => { if (new URL(req.url()).pathname === `/v1/messages/${id}/content`) contentRequests.push(req.url()) })
  await page.goto(`${ob.baseUrl}/dashboard#/messages/${id}`)
  const note = page.getByTestId('content-missing')
  await note.waitFor()
  assert.equal(await note.textContent(), 'Message content is not recorded on this installation (OB_MESSAGE_CONTENT_RETENTION_DAYS is 0).')
  assert.equal(await page.getByTestId('content').getByRole('alert').count(), 0, 'shown as a note, not as an error')

  // the message's next event reloads the message; the content, which will never come, is not asked for again
  await page.locator('[data-testid="live-state"][data-state="live"]').waitFor()
  const reloaded = page.waitForResponse((res) => new URL(res.url()).pathname === `/v1/messages/${id}`)
  await publish(ob, { ...event(org, id, 'opened'), environment: 'test' })
  await reloaded
  assert.deepEqual(contentRequests.length, 1)
  await page.close()
})
