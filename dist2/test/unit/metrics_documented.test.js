import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { OutboxMetrics } from '../../stores/metrics/mod.js';
/** The metric table of docs/operations.md ("What each metric means") against what a process exposes. */
const DOC = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
function documented() {
    const section = DOC.slice(DOC.indexOf('### What each metric means'), DOC.indexOf('### Alerts'));
    const rows = new Map();
    for (const m of section.matchAll(/^\| `([a-z_]+)` \| (counter|gauge|histogram)\b/gm))
        rows.set(m[1], m[2]);
    return rows;
}
async function scrape() {
    const text = await new OutboxMetrics().render();
    return new Map([...text.matchAll(/^# TYPE ([a-z_]+) ([a-z]+)$/gm)].map((m) => [m[1], m[2]]));
}
test('every metric of docs/operations.md appears in a scrape, with the documented type', async () => {
    const doc = documented();
    assert.ok(doc.size >= 25, `the table was found (${doc.size} rows)`);
    const exposed = await scrape();
    for (const [name, type] of doc)
        assert.equal(exposed.get(name), type, `${name} is exposed as a ${type}`);
});
test('every outbox_ metric a process exposes is documented', async () => {
    const doc = documented();
    const undocumented = [...(await scrape()).keys()].filter((n) => n.startsWith('outbox_') && !doc.has(n));
    assert.deepEqual(undocumented, []);
});
test('counters made at start appear with every label value before anything happened', async () => {
    const text = await new OutboxMetrics().render();
    assert.match(text, /^outbox_bounces_total\{environment="live",type="hard",category="mailbox"\} 0$/m);
    assert.match(text, /^outbox_smtp_attempt_duration_seconds_count\{destination="gmail",result="delivered"\} 0$/m);
    assert.match(text, /^outbox_inbound_reports_dropped_total\{reason="forged_tag"\} 0$/m);
    assert.match(text, /^nodejs_eventloop_lag_p99_seconds /m);
});
//# sourceMappingURL=metrics_documented.test.js.map