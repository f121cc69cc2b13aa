import { test, before, after, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import type { Browser, Page } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'
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

  // Scheduled hours ahead: listed, not opened, and not counted as sent (below, by the API and the chart).
  const later = await ob.request('POST', '/v1/messages/send', {
    key: sandboxKey,
    body: { from: `Shop <orders@${org.domain}>`, to: 'later@example.net', subject: 'Later', text: 'later',
      scheduled_at: new Date(Date.now() + 3 * 3600_000).toISOString() }
  })
  assert.equal(later.status, 202, later.text)
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

  // Each row: opens and clicks, and a bounce's reason under its status, as the API lists them.
  const listed = (await ob.request('GET', '/v1/messages?environment=test', { key: org.adminKey })).body.data as Array<Record<string, any>>
  const rowOf = (subject: string) => page.getByTestId('messages').locator('tr', { hasText: subject })
  const invoice = listed.find((m) => m.subject === 'Your invoice')!
  assert.ok(typeof invoice.bounce_reason === 'string' && invoice.bounce_reason !== '', JSON.stringify(invoice))
  await rowOf('Your invoice').getByTestId('bounce-reason').getByText(invoice.bounce_reason, { exact: true }).waitFor()
  assert.ok(listed.find((m) => m.subject === 'Your order #1042')!.opened_count >= 1)
  await rowOf('Later').waitFor()
  const plural = (n: number, w: string): string => `${n} ${w}${n === 1 ? '' : 's'}`
  for (const m of listed) {
    const engagement = m.opened_count === 0 && m.clicked_count === 0
      ? 'not opened'
      : `${plural(m.opened_count, 'open')}, ${plural(m.clicked_count, 'click')}`
    assert.equal(await rowOf(m.subject).locator('.engagement').textContent(), engagement, m.subject)
    if (m.bounce_reason === undefined) assert.equal(await rowOf(m.subject).getByTestId('bounce-reason').count(), 0, m.subject)
  }
  assert.equal(await rowOf('Later').locator('.engagement').textContent(), 'not opened')
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 })
    assert.deepEqual(await axeProblems(page), [], `Activity at ${width} px`)
    assert.ok(await fits(page), `Activity: no horizontal scroll at ${width} px`)
  }

  // Filters live in the address: a reload keeps them, and back and forward return to earlier ones.
  const shown = async (): Promise<string[]> => await page.getByTestId('messages').locator('tbody tr td:nth-child(3)').allTextContents()
  await page.getByLabel('Status').selectOption('bounced')
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.getByTestId('messages').locator('tr', { hasText: 'Your order #1042' }).waitFor({ state: 'detached' })
  assert.deepEqual(await shown(), ['Your invoice'])
  assert.equal(new URL(page.url()).hash, '#/activity?status=bounced&environment=test')
  await page.reload()
  await page.getByTestId('messages').getByRole('link', { name: 'Your invoice' }).waitFor()
  assert.deepEqual(await shown(), ['Your invoice'], 'a reload keeps the filters')
  assert.equal(await page.getByLabel('Status').inputValue(), 'bounced')
  assert.equal(await page.getByLabel('Environment').inputValue(), 'test')
  await page.getByLabel('Status').selectOption('')
  await page.getByLabel('Tag').fill('click')
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.getByTestId('messages').locator('tr', { hasText: 'Your invoice' }).waitFor({ state: 'detached' })
  assert.deepEqual(await shown(), ['Weekly digest'])
  assert.equal(new URL(page.url()).hash, '#/activity?tag=click&environment=test')
  await page.goBack()
  await page.getByTestId('messages').getByRole('link', { name: 'Your invoice' }).waitFor()
  assert.deepEqual(await shown(), ['Your invoice'], 'back returns to the earlier filters')
  assert.equal(await page.getByLabel('Status').inputValue(), 'bounced')
  assert.equal(await page.getByLabel('Tag').inputValue(), '')
  await page.goForward()
  await page.getByTestId('messages').getByRole('link', { name: 'Weekly digest' }).waitFor()
  assert.deepEqual(await shown(), ['Weekly digest'], 'forward too')
  assert.equal(await page.getByLabel('Tag').inputValue(), 'click')
  assert.equal(await page.getByRole('link', { name: 'Activity', exact: true }).getAttribute('aria-current'), 'page')
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
  assert.match(await page.locator('dl.fields').textContent() ?? '', /tagsopenstreamtransactionalrecipient_count/)
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
  const to = new Date(Math.ceil(Date.now() / 3600_000) * 3600_000)
  const stats = (await ob.request('GET', `/v1/stats?environment=test&interval=hour&to=${to.toISOString()}` +
    `&from=${new Date(to.getTime() - 24 * 3600_000).toISOString()}`, { key: org.adminKey })).body
  assert.equal(stats.counts.sent, 3, 'the three sent now; the scheduled one is not sent yet')
  assert.equal(counts.sent, stats.counts.sent)
  const legend = await page.locator('figure.chart').first().locator('.legend li').allTextContents()
  assert.deepEqual(legend, ['sent', 'delivered', 'bounced', 'opened'].map((k) => `${k} (${stats.counts[k]})`),
    'the chart agrees with the API')
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 })
    await eventuallyAxesFit(page, width)
    assert.deepEqual(await axeProblems(page), [], `Statistics at ${width} px`)
    assert.ok(await fits(page), `Statistics: no horizontal scroll at ${width} px`)
    // each total stays on one line with its name: a line breaks between figures, never inside one
    const split = await page.locator('dl.totals dt').evaluateAll((dts) => dts.filter((dt) => {
      const name = dt.getBoundingClientRect()
      const value = dt.nextElementSibling!.getBoundingClientRect()
      return Math.abs(value.top - name.top) > 2 || value.left < name.right
    }).map((dt) => dt.textContent))
    assert.deepEqual(split, [], `Statistics: figures apart from their names at ${width} px`)
    if (width === 390) await screenshot(page, 'stats-390')
  }
  await page.setViewportSize({ width: 390, height: 900 })
  // at 390 px three days and a week are labelled by day only (docs/dashboard.md)
  for (const [hours, range] of [['72', 'last 3 days'], ['168', 'last 7 days']] as const) {
    await page.getByLabel('Range').selectOption(hours)
    await eventuallyAxesFit(page, 390, range, true)
  }
  await page.getByLabel('Range').selectOption('24')
  await page.setViewportSize({ width: 1280, height: 900 })
  await eventuallyAxesFit(page, 1280)
  await screenshot(page, 'stats')

  // A stream the reputation guard paused shows as a notice saying why (docs/reputation.md); written as the guard writes it.
  const at = new Date().toISOString()
  await ob.proc.cp.pauses.pause({
    kind: 'stream_pause', org_id: org.orgId, stream: 'transactional', reason: 'complaint_rate', paused_at: at,
    counts: { delivered: 997, hard_bounced: 3, complained: 4 }, rates: { volume: 1000, bounce_rate: 0.003, complaint_rate: 0.004 }
  })
  await page.reload()
  const notice = page.getByTestId('stream-paused')
  await notice.waitFor()
  assert.match(await notice.textContent() ?? '', /^Sending on stream transactional is paused since .+: its complaint rate reached 0\.4 % \(threshold 0\.3 %\) over 1000 sends\. An admin resumes it with POST \/v1\/reputation\/streams\/transactional\/resume\.$/)
  await ob.proc.cp.pauses.resume(org.orgId, 'transactional')
  await page.close()
})

test('a message shows every recipient of the request with its own state and the counts: complained counted as delivered, ' +
  'a retried one, a suppressed one with its reason; at 390 and 1280 px with no serious axe finding', { skip: missing }, async () => {
  const msg = await queue(ob, org, {
    from: `Shop <orders@${org.domain}>`, to: ['ann@example.net', 'bob@example.net'], cc: ['cy@example.net'], subject: 'Your receipt',
    suppressed: ['dee@example.net'], suppressed_reasons: ['hard_bounce']
  })
  let at = Date.now()
  const next = new Date(Date.now() + 3_600_000).toISOString()
  for (const [to, type, extra] of [
    ['ann@example.net', 'delivered', { smtp_response: '250 2.0.0 OK' }],
    ['bob@example.net', 'delivered', { smtp_response: '250 2.0.0 OK' }],
    ['bob@example.net', 'complained', { feedback_type: 'abuse' }],
    ['cy@example.net', 'deferred', { smtp_response: '451 4.7.1 greylisted', attempt: 1, next_attempt_at: next }]
  ] as const) {
    await publish(ob, event(org, msg.id, type, new Date(at += 1000), { ...extra, to }))
  }
  const page = await signedInPage(browser, ob.baseUrl, org.adminKey)
  await page.goto(`${ob.baseUrl}/dashboard#/messages/${msg.id}`)
  await page.getByTestId('recipient-counts').getByText('2 of 4 delivered · 1 deferred · 1 suppressed').waitFor()
  const rows = await page.getByTestId('recipients').locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent)))
  assert.deepEqual(rows, [
    ['ann@example.net', 'delivered'], ['bob@example.net', 'complained'], ['cy@example.net', 'deferred'],
    ['dee@example.net', 'suppressed hard bounce']
  ])
  assert.match(await page.locator('dl.fields').textContent() ?? '', /statusdeferred/, 'deferred while a recipient is retried')
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 800 })
    const result = await new AxeBuilder({ page }).analyze()
    const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`)
    assert.deepEqual(serious, [], `at ${width} px`)
    const o = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }))
    assert.ok(o.scrollWidth <= o.innerWidth, `page is ${o.scrollWidth} px wide in a ${o.innerWidth} px window`)
  }
  await screenshot(page, 'message-recipients')
  await page.close()
})

async function axeProblems (page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze()
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`)
}

async function fits (page: Page): Promise<boolean> {
  return await page.evaluate(() => document.scrollingElement!.scrollWidth <= window.innerWidth)
}

/**
 * Every chart's axes, once drawn for `width`: round value ticks (steps of 1, 2 or 5 × 10^n), time labels that are
 * times or dates (never raw timestamps), at least 10 px tall on screen, inside the chart and overlapping none.
 */
async function eventuallyAxesFit (page: Page, width: number, range = 'last 24 hours', daysOnly = false): Promise<void> {
  // drawn again for the width its box now has, one drawing unit a pixel (both charts: while a range loads there are none,
  // and `every` of none is true)
  await page.waitForFunction(({ w, r }) => {
    const svgs = [...document.querySelectorAll('figure.chart svg')]
    return svgs.length === 2 && svgs.every((s) => Number(s.getAttribute('width')) === Math.floor(s.parentElement!.clientWidth) &&
      s.getBoundingClientRect().width < w && (s.querySelector('title')?.textContent ?? '').endsWith(r))
  }, { w: width, r: range })
  const charts = await page.locator('figure.chart svg').evaluateAll((svgs) => svgs.map((svg) => {
    const box = (e: Element): { left: number, right: number, top: number, bottom: number, height: number } => {
      const r = e.getBoundingClientRect()
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, height: r.height }
    }
    return {
      svg: box(svg),
      y: [...svg.querySelectorAll('.y-tick text')].map((t) => t.textContent ?? ''),
      x: [...svg.querySelectorAll('.x-tick tspan')].map((t) => ({ text: t.textContent ?? '', ...box(t) }))
    }
  }))
  assert.equal(charts.length, 2)
  for (const c of charts) {
    const y = c.y.map(Number)
    assert.ok(y.length >= 2 && y[0] === 0, `value ticks ${c.y.join(',')}`)
    for (let i = 1; i < y.length; i++) assert.match(String(y[i]! - y[i - 1]!), /^[125]0*$/, `value ticks ${c.y.join(',')}`)
    assert.ok(c.x.length >= 2, `time labels at ${width} px: ${c.x.map((l) => l.text).join(' | ')}`)
    // a date at least once (under a midnight or the first time); only dates when times would not fit
    const dates = c.x.filter((l) => /[A-Za-z]{3}/.test(l.text))
    assert.ok(dates.length >= 1 && (!daysOnly || dates.length === c.x.length), `dates at ${width} px: ${c.x.map((l) => l.text).join('|')}`)
    for (const l of c.x) {
      assert.doesNotMatch(l.text, /T\d{2}:|Z$|^\d{10,}$/, 'no raw timestamp')
      assert.match(l.text, /^\d{2}:\d{2}$|[A-Za-z]{3}/, `a time or a date: ${l.text}`)
      assert.ok(l.height >= 10, `label ${l.text} is ${l.height} px tall at ${width} px`)
      assert.ok(l.left >= c.svg.left - 0.5 && l.right <= c.svg.right + 0.5, `label ${l.text} inside the chart at ${width} px`)
    }
    for (let i = 0; i < c.x.length; i++) {
      for (let j = i + 1; j < c.x.length; j++) {
        const a = c.x[i]!
        const b = c.x[j]!
        const overlap = a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5
        assert.ok(!overlap, `labels ${a.text} and ${b.text} overlap at ${width} px`)
      }
    }
  }
}
