import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { TestOutbox } from '../../helpers/outbox.js';
import { cpuMs, ADVERSARIAL_HTML } from '../../helpers/work.js';
let ob;
let org;
let sendKey;
before(async () => {
    ob = await TestOutbox.start();
    org = await ob.org();
    sendKey = await ob.key(org, ['send']);
});
after(async () => { await ob.close(); });
async function analyze(html) {
    const r = await ob.request('POST', '/v1/messages/analyze', { key: sendKey, body: { subject: 'Hello', html, text: 'Hello' } });
    assert.equal(r.status, 200);
    return r.body;
}
const N = 25_000;
for (const [shape, make] of Object.entries(ADVERSARIAL_HTML)) {
    test(`analyze: the work for ${shape} HTML grows about linearly (n and 8n)`, async (t) => {
        await analyze(make(100)); // warm up the worker thread and the code paths
        const small = await cpuMs(async () => { await analyze(make(N)); });
        const large = await cpuMs(async () => { await analyze(make(8 * N)); });
        const figures = `${shape}: ${small.toFixed(0)} ms of CPU for n, ${large.toFixed(0)} ms for 8n`;
        t.diagnostic(figures);
        assert.ok(large / small < 20, figures);
    });
}
test('HTML past the nesting limit is answered at once, flagged as not analyzed', async () => {
    const r = await analyze(ADVERSARIAL_HTML.nested(200_000));
    assert.equal(r.content_analysis, 'skipped');
    const check = r.checks.find((c) => c.id === 'html_not_analyzed');
    assert.ok(check !== undefined, 'html_not_analyzed fired');
    assert.match(check.message, /512/);
    // The rules that read the HTML did not run on the part before the limit: no html_unbalanced for 512 open divs.
    assert.equal(r.checks.some((c) => c.id === 'html_unbalanced'), false);
    const normal = await analyze('<p>Hello <a href="https://example.org/unsubscribe">unsubscribe</a></p>');
    assert.equal(normal.content_analysis, 'complete');
});
test('the gateway event loop keeps turning while an analysis runs', async () => {
    // Heavy but within the limits, so the whole document is parsed: the work is real and happens on a worker thread.
    // Sized to parse well inside the 1 s time budget on a loaded 2-core machine, so the analysis completes.
    const html = '<div>'.repeat(400) + '<span class="a" title="b" data-x="c">word</span>'.repeat(20_000);
    const delay = monitorEventLoopDelay({ resolution: 1 });
    const started = performance.now();
    delay.enable();
    const r = await analyze(html);
    delay.disable();
    const took = performance.now() - started;
    const longestStallMs = delay.max / 1e6;
    assert.ok(longestStallMs < took / 2, `the event loop stalled ${longestStallMs.toFixed(0)} ms during a ${took.toFixed(0)} ms analysis`);
    assert.equal(r.content_analysis, 'complete');
});
//# sourceMappingURL=analyze_html_bounded.test.js.map