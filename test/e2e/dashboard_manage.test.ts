import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Browser } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
import { jetstream } from '@nats-io/jetstream'
import { eventId, eventRecord, eventSubject, type HealthChangedData } from '../../protocol/mod.ts'
import { TestOutbox, type TestOrg } from '../helpers/outbox.ts'
import { browserMissing, launchBrowser, screenshot, signedInPage } from '../helpers/browser.ts'
import { HttpsReceiver, testCa } from '../helpers/https_receiver.ts'
import { verifyWebhook } from '../../client/src/mod.ts'
import { publishEvent } from '../helpers/webhooks.ts'
import { eventually } from '../helpers/waiting.ts'

const missing = browserMissing()
let ob: TestOutbox
let org: TestOrg
let browser: Browser

let receiver: HttpsReceiver

before(async () => {
  if (missing !== undefined) return
  receiver = await HttpsReceiver.start()
  ob = await TestOutbox.start({ env: { OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_CA_FILE: testCa().caFile } })
  org = await ob.org('pro')
  browser = await launchBrowser()
})
after(async () => {
  await browser?.close()
  await ob?.close()
  await receiver?.close()
})

test('create a key (value shown once), then revoke it', { skip: missing }, async () => {
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.goto(`${ob.baseUrl}/dashboard#/keys`)
  await page.getByLabel('Name').fill('reporting')
  await page.getByRole('checkbox', { name: 'send' }).uncheck()
  await page.getByRole('checkbox', { name: 'read' }).check()
  await page.getByRole('button', { name: 'Create key' }).click()
  const value = (await page.getByTestId('new-key-value').textContent())!
  assert.match(value, /^ob_live_/)
  assert.equal((await ob.request('GET', '/v1/whoami', { key: value })).status, 200, 'the shown value is a working key')
  const row = page.locator('tr', { hasText: 'reporting' })
  await row.getByText('active').waitFor()
  await screenshot(page, 'keys')
  await row.getByRole('button', { name: 'Revoke' }).click()
  await row.getByText('revoked').waitFor()
  const after = await ob.request('GET', '/v1/whoami', { key: value })
  assert.equal(after.status, 401)
  await page.reload()
  await page.locator('tr', { hasText: 'reporting' }).getByText('revoked').waitFor()
  assert.equal(await page.getByTestId('new-key-value').count(), 0, 'the value is never shown again')
  await page.close()
})

test('rotate a key with a grace period: both values work, then revoke the new one', { skip: missing }, async () => {
  const old = await ob.key(org, ['read'])
  const oldId = (await ob.request('GET', '/v1/whoami', { key: old })).body.key_id as string
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.goto(`${ob.baseUrl}/dashboard#/keys`)
  const row = page.locator('tr', { has: page.locator(`button[data-key-id="${oldId}"]`) })
  await row.getByRole('spinbutton').fill('5')
  await row.getByRole('button', { name: 'Rotate' }).click()
  const value = (await page.getByTestId('new-key-value').textContent())!
  assert.notEqual(value, old)
  assert.equal((await ob.request('GET', '/v1/whoami', { key: value })).status, 200)
  assert.equal((await ob.request('GET', '/v1/whoami', { key: old })).status, 200, 'the old value works during the grace period')
  await page.locator('tr', { has: page.locator(`button[data-key-id="${oldId}"]`) }).getByText('expiring').waitFor()
  const newId = (await ob.request('GET', '/v1/whoami', { key: value })).body.key_id as string
  await page.locator(`button[data-key-id="${newId}"]`).click()
  await page.waitForFunction((id) => document.querySelector(`button[data-key-id="${id}"]`) === null, newId)
  assert.equal((await ob.request('GET', '/v1/whoami', { key: value })).status, 401)
  await page.close()
})

test('a rejected form shows each field error as the API words it', { skip: missing }, async () => {
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.goto(`${ob.baseUrl}/dashboard#/keys`)
  await page.getByLabel('Name').fill('nothing')
  await page.getByRole('checkbox', { name: 'send' }).uncheck()
  await page.getByRole('button', { name: 'Create key' }).click()
  const alert = page.getByRole('alert')
  await alert.waitFor()
  const api = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'nothing', domain_id: org.domainId, permissions: [], environment: 'live' }
  })
  assert.equal(api.status, 400)
  assert.ok(api.body.error.errors.length >= 1)
  assert.equal(await alert.locator('.error-message').textContent(), api.body.error.message)
  for (const e of api.body.error.errors as Array<{ field: string, message: string }>) {
    assert.ok((await alert.locator('li').allTextContents()).includes(`${e.field}: ${e.message}`), `${e.field} listed`)
  }
  await page.close()
})

test('add a domain, see its DNS records, verify it', { skip: missing }, async () => {
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.goto(`${ob.baseUrl}/dashboard#/domains`)
  const name = `news${Date.now()}.example.org`
  await page.getByLabel('Domain name').fill(name)
  await page.getByRole('button', { name: 'Add domain' }).click()
  const card = page.locator(`article[data-domain="${name}"]`)
  await card.getByText('pending').waitFor()
  assert.ok((await card.locator('td').allTextContents()).some((t) => t.includes(`._domainkey.${name}`)), 'DKIM record listed')
  await screenshot(page, 'domains')
  await card.getByRole('button', { name: 'Verify' }).click()
  await card.getByRole('heading').getByText('verified', { exact: true }).waitFor()
  // its health: a notice with the overall status and what it means, then every item (what DNS answers depends on
  // the machine's resolvers: nothing is published, or nothing answers)
  await card.getByRole('button', { name: 'Check health' }).click()
  const health = card.getByRole('table', { name: `Health of ${name}` })
  await health.waitFor({ timeout: 15_000 })
  assert.match(await card.getByRole('status').innerText(), /^Health: (error|not_checked)\. (Mail fails|Nothing could be checked)/)
  const dkim = health.locator('tr', { hasText: `._domainkey.${name}` }).first()
  assert.match(await dkim.innerText(), /dkim/)
  const axe = await new AxeBuilder({ page }).include(`article[data-domain="${name}"]`).analyze()
  assert.deepEqual(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id), [])
  await page.close()
})

test('a domain whose health got worse shows a notice naming the items', { skip: missing }, async () => {
  const data: HealthChangedData = {
    domain_id: org.domainId,
    domain: org.domain,
    status: 'error',
    previous_status: 'ok',
    checked_at: new Date().toISOString(),
    worsened: [{
      check: 'dkim', subject: `ob1._domainkey.${org.domain}`, status: 'error', previous_status: 'ok', message: 'The DKIM record is missing'
    }]
  }
  const e = eventRecord(eventId('domain.health_changed', org.domainId, data.checked_at), 'domain.health_changed', org.orgId, data)
  await jetstream(ob.proc.nc).publish(eventSubject(org.orgId, e.type), JSON.stringify(e), { msgID: e.id })
  const projected = async (): Promise<boolean> =>
    (await ob.request('GET', '/v1/events?type=domain.health_changed', { key: org.adminKey })).body.data.length === 1
  await eventually(projected, 'the event in the read model')
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.goto(`${ob.baseUrl}/dashboard#/domains`)
  const notice = page.locator(`article[data-domain="${org.domain}"]`).getByTestId('health-changed')
  await notice.waitFor()
  assert.match(await notice.innerText(), new RegExp(`^Health got worse .+: dkim ob1\\._domainkey\\.${org.domain.replace(/\./g, '\\.')} is error \\(was ok\\)`))
  const axe = await new AxeBuilder({ page }).include(`article[data-domain="${org.domain}"]`).analyze()
  assert.deepEqual(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id), [])
  await page.close()
})

test('a webhook: secret shown once, a test event of a chosen type reaches the HTTPS receiver signed', { skip: missing }, async () => {
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.goto(`${ob.baseUrl}/dashboard#/webhooks`)
  const url = receiver.url('/dashboard-hook')
  await page.getByLabel('HTTPS URL').fill(url)
  await page.getByRole('button', { name: 'Add webhook' }).click()
  const secret = (await page.getByTestId('webhook-secret').textContent())!
  assert.match(secret, /^whsec_/)
  await page.getByRole('link', { name: url }).click()
  await page.getByRole('heading', { name: /^Webhook / }).waitFor()
  await page.getByLabel('Event type').selectOption('bounced')
  await page.getByRole('button', { name: 'Send test event' }).click()
  await page.getByText('A signed test bounced event is on its way.').waitFor()
  const [got] = await receiver.waitFor(1, { path: '/dashboard-hook' })
  const raw = got!.rawBody.toString('utf8')
  assert.equal(JSON.parse(raw).type, 'bounced')
  assert.equal(await verifyWebhook(raw, got!.headers['x-service-signature'] as string, secret), true,
    'signed with the secret the dashboard showed')
  const deliveries = page.getByTestId('deliveries')
  await eventually(async () => {
    if (await deliveries.locator('td', { hasText: /^200$/ }).count() > 0) return true
    await page.getByRole('button', { name: 'Refresh' }).click()
    return false
  }, 'a 200 in the delivery log', undefined, 200)
  await deliveries.locator('td', { hasText: /^200$/ }).first().waitFor()
  // a test event is marked as one, has no Replay button (it is not stored), and shows what was sent and answered
  const row = deliveries.locator('tr', { hasText: 'Test event' }).first()
  assert.equal(await row.getByText('test', { exact: true }).count(), 1)
  assert.equal(await row.getByRole('button', { name: /^Replay/ }).count(), 0)
  await row.getByText('Bodies').click()
  assert.equal(JSON.parse(await row.locator('pre.body-excerpt').first().innerText()).type, 'bounced')
  assert.equal(await row.locator('pre.body-excerpt').nth(1).innerText(), 'ok')
  await screenshot(page, 'webhooks')
  // with the bodies open, at both widths: no serious axe finding, and the page does not scroll sideways at 390 px
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 })
    const axe = await new AxeBuilder({ page }).include('[data-testid="deliveries"]').analyze()
    assert.deepEqual(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id), [], `${width} px`)
    const wide = await page.evaluate(() => document.scrollingElement!.scrollWidth - window.innerWidth)
    assert.ok(wide <= 0, `the page is ${wide} px wider than the ${width} px window`)
  }
  await page.close()
})

test('a webhook: rotate the secret after a confirmation, replay a delivered event from its delivery log', { skip: missing }, async () => {
  const url = receiver.url('/dashboard-rotate')
  const created = await ob.request('POST', '/v1/webhooks', { key: org.adminKey, body: { url, events: ['delivered'] } })
  const evt = await publishEvent(ob, org, 'delivered')
  await receiver.waitFor(1, { path: '/dashboard-rotate' })
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.goto(`${ob.baseUrl}/dashboard#/webhooks/${created.body.id}`)
  await page.getByRole('heading', { name: /^Webhook / }).waitFor()

  // Dismissing the confirmation rotates nothing (the page's default handler, which accepts, is set aside).
  page.removeAllListeners('dialog')
  const asked: string[] = []
  page.once('dialog', (d) => { asked.push(d.message()); void d.dismiss() })
  await page.getByLabel('Grace period (minutes)').fill('60')
  await page.getByRole('button', { name: 'Rotate secret' }).click()
  await page.waitForTimeout(300)
  assert.equal(await page.getByTestId('rotated-secret').count(), 0)
  assert.match(asked[0] ?? '', /Replace the signing secret\? The current one keeps signing for 60 minutes/)
  page.once('dialog', (d) => { void d.accept() })
  await page.getByRole('button', { name: 'Rotate secret' }).click()
  const secret = (await page.getByTestId('rotated-secret').textContent())!
  assert.match(secret, /^whsec_/)
  assert.notEqual(secret, created.body.secret)

  // The event from the log goes again: same id, signed with the new and the old secret during the grace period.
  const replay = page.getByRole('button', { name: `Replay ${evt.id}` })
  await eventually(async () => {
    if (await replay.count() > 0) return true
    await page.getByRole('button', { name: 'Refresh' }).click()
    return false
  }, 'the event in the delivery log', undefined, 200)
  await replay.first().click()
  await page.getByText(`Event ${evt.id} is being sent again.`).waitFor()
  const shown = await page.evaluate(() => {
    const el = document.activeElement as HTMLElement
    const box = el.getBoundingClientRect()
    return { text: el.textContent, inView: box.top >= 0 && box.bottom <= window.innerHeight }
  })
  assert.deepEqual(shown, { text: `Event ${evt.id} is being sent again.`, inView: true }, 'the result is focused and on screen')
  const [, again] = await receiver.waitFor(2, { path: '/dashboard-rotate' })
  const raw = again!.rawBody.toString('utf8')
  assert.equal(JSON.parse(raw).id, evt.id)
  assert.equal(again!.headers['webhook-id'], evt.id)
  for (const s of [secret, created.body.secret as string]) {
    assert.equal(await verifyWebhook(raw, again!.headers['x-service-signature'] as string, s), true)
  }
  await screenshot(page, 'webhook-rotate-replay')
  await page.close()
})

test('inbound routes and suppressions: add and remove', { skip: missing }, async () => {
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.goto(`${ob.baseUrl}/dashboard#/inbound`)
  await page.getByLabel('Address (or *@domain)').fill(`support@${org.domain}`)
  await page.getByLabel('Include attachment content (base64)').check()
  await page.getByRole('button', { name: 'Add route' }).click()
  const route = page.getByTestId('routes').locator('tr', { hasText: `support@${org.domain}` })
  await route.getByText('included').waitFor()
  const routes = await ob.request('GET', '/v1/inbound/routes', { key: org.adminKey })
  assert.equal(routes.body.data[0].action.include_attachments, true)
  await route.getByRole('button', { name: 'Delete' }).click()
  await page.getByText('No inbound routes.').waitFor()

  await page.goto(`${ob.baseUrl}/dashboard#/suppressions`)
  await page.getByLabel('Email address').fill('gone@example.net')
  await page.getByRole('button', { name: 'Suppress' }).click()
  const sup = page.getByTestId('suppressions').locator('tr', { hasText: 'gone@example.net' })
  await sup.getByText('manual').waitFor()
  await sup.getByRole('button', { name: 'Remove' }).click()
  await page.getByText('No suppressed addresses.').waitFor()
  assert.equal((await ob.request('GET', '/v1/suppressions', { key: org.adminKey })).body.data.length, 0)
  await page.close()
})

test('a webhook: its URL and filters changed from its page, the secret kept', { skip: missing }, async () => {
  const created = await ob.request('POST', '/v1/webhooks', {
    key: org.adminKey, body: { url: receiver.url('/dashboard-before'), events: ['delivered'], filters: { tags: ['receipt'] } }
  })
  assert.equal(created.status, 201, created.text)
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.goto(`${ob.baseUrl}/dashboard#/webhooks/${created.body.id}`)
  await page.getByText('tags: receipt').waitFor()
  const after = receiver.url('/dashboard-after')
  await page.getByLabel('HTTPS URL').fill(after)
  await page.getByLabel('Only messages tagged (any of)').fill('receipt, invoice')
  await page.getByLabel('Only mail from the domains (any of)').fill(org.domain)
  await page.getByLabel('Environment').selectOption('test')
  await page.getByRole('button', { name: 'Save changes' }).click()
  await page.getByText('Saved. Deliveries still queued go to the new URL').waitFor()
  await page.getByText(`tags: receipt, invoice; domains: ${org.domain}; environment: test`).waitFor()
  const now = await ob.request('GET', `/v1/webhooks/${created.body.id}`, { key: org.adminKey })
  assert.equal(now.body.url, after)
  assert.deepEqual(now.body.filters, { tags: ['receipt', 'invoice'], domains: [org.domain], environment: 'test' })
  // A domain the organisation does not have is refused, and said so on the page.
  await page.getByLabel('Only mail from the domains (any of)').fill('elsewhere.example')
  await page.getByRole('button', { name: 'Save changes' }).click()
  await page.getByText('elsewhere.example is not a domain of this organisation').first().waitFor()
  await screenshot(page, 'webhook-edit')
  await page.close()
})
