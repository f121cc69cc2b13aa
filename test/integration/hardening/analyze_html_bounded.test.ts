import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { cpuMs, grewAboutLinearly, mainThreadCpuMs, ADVERSARIAL_HTML } from '../../helpers/work.ts'

let ob: TestOutbox
let org: TestOrg
let sendKey: string

before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  sendKey = await ob.key(org, ['send'])
})
after(async () => { await ob.close() })

async function analyze (html: string): Promise<any> {
  const r = await ob.request('POST', '/v1/messages/analyze', { key: sendKey, body: { subject: 'Hello', html, text: 'Hello' } })
  assert.equal(r.status, 200)
  return r.body
}

const N = 25_000

for (const [shape, make] of Object.entries(ADVERSARIAL_HTML)) {
  test(`analyze: the work for ${shape} HTML grows about linearly (n and 8n)`, async (t) => {
    await analyze(make(100)) // warm up the worker thread and the code paths
    const small = await cpuMs(async () => { await analyze(make(N)) })
    const large = await cpuMs(async () => { await analyze(make(8 * N)) })
    const figures = `${shape}: ${small.toFixed(0)} ms of CPU for n, ${large.toFixed(0)} ms for 8n`
    t.diagnostic(figures)
    assert.ok(grewAboutLinearly(small, large), figures)
  })
}

test('HTML past the nesting limit is answered at once, flagged as not analyzed', async () => {
  const r = await analyze(ADVERSARIAL_HTML.nested(200_000))
  assert.equal(r.content_analysis, 'skipped')
  const check = r.checks.find((c: { id: string }) => c.id === 'html_not_analyzed')
  assert.ok(check !== undefined, 'html_not_analyzed fired')
  assert.match(check.message, /512/)
  // The rules that read the HTML did not run on the part before the limit: no html_unbalanced for 512 open divs.
  assert.equal(r.checks.some((c: { id: string }) => c.id === 'html_unbalanced'), false)
  const normal = await analyze('<p>Hello <a href="https://example.org/unsubscribe">unsubscribe</a></p>')
  assert.equal(normal.content_analysis, 'complete')
})

test('the gateway event loop keeps turning while an analysis runs', async (t) => {
  // Heavy but within the limits, so the whole document is parsed: the work is real and happens on a worker thread.
  // Sized to parse well inside the 1 s time budget on a loaded 2-core machine, so the analysis completes.
  const html = '<div>'.repeat(400) + '<span class="a" title="b" data-x="c">word</span>'.repeat(20_000)
  // The loop is free to turn when the parse's CPU is spent on another thread: CPU time, unlike a stall measured
  // in wall-clock time, does not grow when other processes hold the cores. The main thread (the gateway's event
  // loop, and the test's client) still reads the request and writes the answer.
  const mainBefore = mainThreadCpuMs()
  const allBefore = process.cpuUsage()
  const r = await analyze(html)
  const mainMs = mainThreadCpuMs() - mainBefore
  const all = process.cpuUsage(allBefore)
  const allMs = (all.user + all.system) / 1000
  const figures = `${allMs.toFixed(0)} ms of CPU for the analysis request, ${mainMs} ms of it on the event loop's thread`
  t.diagnostic(figures)
  assert.ok(mainMs < allMs / 2, figures)
  assert.equal(r.content_analysis, 'complete')
})
