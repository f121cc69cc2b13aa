import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HTML_LIMITS, scanHtml, idTime, newId } from '../../protocol/mod.js';
import { rewriteHtml } from '../../engine/actor/tracking.js';
test('a parse stops at the first limit reached, and names it', () => {
    assert.equal(scanHtml('<div>'.repeat(HTML_LIMITS.maxDepth)).stoppedAt, undefined);
    assert.equal(scanHtml('<div>'.repeat(HTML_LIMITS.maxDepth + 1)).stoppedAt, 'depth');
    assert.equal(scanHtml('<br>'.repeat(HTML_LIMITS.maxElements + 1)).stoppedAt, 'elements');
    const attrs = (n) => '<div ' + Array.from({ length: n }, (_, i) => `a${i}=x`).join(' ') + '>';
    assert.equal(scanHtml(attrs(HTML_LIMITS.maxAttributes)).stoppedAt, undefined);
    assert.equal(scanHtml(attrs(HTML_LIMITS.maxAttributes + 1)).stoppedAt, 'attributes');
    assert.equal(scanHtml('<p>x</p>'.repeat(10_000), { ...HTML_LIMITS, timeBudgetMs: -1 }).stoppedAt, 'time');
});
test('text read in pieces (entities, input slices) is joined as written', () => {
    assert.equal(scanHtml('<p>AT&amp;T</p><p>next</p>').text, 'AT&T next');
    // A word across the 16 KB slice boundary stays one word.
    const filler = 'x'.repeat(16 * 1024 - '<p>'.length - 3);
    const scan = scanHtml(`<p>${filler}unsubscribe</p>`);
    assert.equal(scan.text, `${filler}unsubscribe`);
});
test('HTML past the limits keeps its links as written and still gets the open pixel', () => {
    const html = '<a href="https://example.org/x">x</a>' + '<div>'.repeat(HTML_LIMITS.maxDepth + 1);
    const out = rewriteHtml(html, { openUrl: 'https://t.example/o', clickUrl: (u) => `https://t.example/c?u=${u}` });
    assert.ok(out.startsWith(html));
    assert.match(out, /https:\/\/t\.example\/o/);
    assert.doesNotMatch(out, /t\.example\/c/);
});
test('idTime reads back the time newId wrote, and nothing from other strings', () => {
    const t = Date.UTC(2026, 10, 25, 2, 30);
    assert.equal(idTime(newId('msg', t)), t);
    assert.equal(idTime('msg_short'), undefined);
    assert.equal(idTime('not an id'), undefined);
});
//# sourceMappingURL=html_limits.test.js.map