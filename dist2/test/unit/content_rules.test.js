import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { analyzeContent, RULES, verdictOf } from '../../protocol/mod.js';
const CLEAN = {
    subject: 'Your weekly summary',
    from: 'Acme <team@acme.test>',
    html: '<p>Here is what happened this week in your projects. Three tasks were completed.</p><p><a href="https://acme.test/app">Open the dashboard</a> · <a href="https://acme.test/unsubscribe">Unsubscribe</a></p>',
    text: 'Here is what happened this week. Unsubscribe: https://acme.test/unsubscribe'
};
function fired(input) {
    return analyzeContent({ ...CLEAN, ...input }).checks.map((c) => c.id);
}
test('clean content fires nothing and passes', () => {
    assert.deepEqual(analyzeContent(CLEAN), { score: 0, verdict: 'pass', checks: [], content_analysis: 'complete' });
});
test('verdict thresholds: pass < 3 ≤ warn < 6 ≤ fail', () => {
    assert.equal(verdictOf(0), 'pass');
    assert.equal(verdictOf(2.9), 'pass');
    assert.equal(verdictOf(3), 'warn');
    assert.equal(verdictOf(5.9), 'warn');
    assert.equal(verdictOf(6), 'fail');
    assert.equal(verdictOf(10), 'fail');
});
test('at least 15 rules, unique ids, positive weights', () => {
    assert.ok(RULES.length >= 15);
    assert.equal(new Set(RULES.map((r) => r.id)).size, RULES.length);
    for (const r of RULES)
        assert.ok(r.weight > 0 && r.weight <= 3, r.id);
});
test('every rule is documented in docs/analyze.md with its severity and weight', () => {
    const doc = readFileSync(new URL('../../../docs/analyze.md', import.meta.url), 'utf8');
    for (const r of RULES) {
        const row = doc.split('\n').find((l) => l.startsWith(`| \`${r.id}\``));
        assert.ok(row !== undefined, `${r.id} has a row`);
        assert.ok(row.includes(`| ${r.severity} |`), `${r.id} severity`);
        assert.ok(row.includes(`| ${r.weight} |`), `${r.id} weight`);
    }
});
test('subject rules', () => {
    assert.ok(fired({ subject: '' }).includes('subject_missing'));
    assert.ok(fired({ subject: '   ' }).includes('subject_missing'));
    assert.ok(fired({ subject: 'HUGE SALE TODAY ONLY' }).includes('subject_all_caps'));
    assert.ok(!fired({ subject: 'Meeting at IBM HQ' }).includes('subject_all_caps'));
    assert.ok(fired({ subject: 'Hello!!!' }).includes('excessive_punctuation'));
    assert.ok(fired({ subject: 'Win $$$ today' }).includes('excessive_punctuation'));
});
test('body rules read visible text, not markup', () => {
    assert.ok(fired({ html: `<p>${'THIS IS ALL SHOUTING TEXT FOR YOU '.repeat(3)}</p><a href="https://acme.test/unsubscribe">u</a>` }).includes('body_all_caps'));
    assert.ok(!fired({ html: `<P CLASS="X">${'normal words in lower case '.repeat(3)}</P><a href="https://acme.test/unsubscribe">u</a>` }).includes('body_all_caps'));
    assert.ok(fired({ html: '<p>Act now and claim your prize</p>' }).includes('spam_phrases'));
    assert.ok(fired({ html: '<p>Act now, claim your prize, 100% free, risk-free</p>' }).includes('spam_phrases_many'));
});
test('image-only mail and a missing text part', () => {
    const ids = fired({ html: '<a href="https://acme.test/unsubscribe"><img src="https://acme.test/banner.png"></a>', text: '' });
    assert.ok(ids.includes('image_only'));
    assert.ok(ids.includes('missing_text_part'));
});
test('link rules: text/href mismatch, shorteners, IP-address URLs, too many links, http', () => {
    assert.ok(fired({ html: '<a href="https://evil.test/login">https://www.mybank.com/login</a>' }).includes('link_text_mismatch'));
    assert.ok(fired({ html: '<a href="https://evil.test/login">mybank.com</a>' }).includes('link_text_mismatch'));
    assert.ok(!fired({ html: '<a href="https://links.acme.test/x">www.acme.test</a><a href="https://acme.test/unsubscribe">Unsubscribe</a>' }).includes('link_text_mismatch'), 'same registrable domain');
    assert.ok(!fired({ html: '<a href="https://evil.test/">Click to read more</a>' }).includes('link_text_mismatch'), 'prose is not a claim');
    assert.ok(fired({ html: '<a href="https://bit.ly/abc">offer</a>' }).includes('url_shortener'));
    assert.ok(fired({ html: '<a href="http://203.0.113.9/x">offer</a>' }).includes('ip_address_url'));
    assert.ok(fired({ html: '<a href="https://[2001:db8::1]/x">offer</a>' }).includes('ip_address_url'));
    assert.ok(fired({ html: Array.from({ length: 30 }, (_, i) => `<a href="https://acme.test/${i}">l${i}</a>`).join('') }).includes('too_many_links'));
    assert.ok(fired({ html: '<a href="http://acme.test/">x</a>' }).includes('insecure_links'));
});
test('unsubscribe link present or missing', () => {
    assert.ok(fired({ html: '<p>No way out</p>', text: 'No way out' }).includes('missing_unsubscribe'));
    assert.ok(!fired({ html: '<p>x</p><a href="https://acme.test/prefs">Unsubscribe</a>', text: 'x' }).includes('missing_unsubscribe'));
    assert.ok(!fired({ html: '<p>x</p><a href="https://acme.test/unsubscribe?u=1">Manage</a>', text: 'x' }).includes('missing_unsubscribe'));
});
test('oversized and unbalanced HTML', () => {
    assert.ok(fired({ html: `<p>${'a'.repeat(101 * 1024)}</p><a href="https://acme.test/unsubscribe">u</a>` }).includes('html_too_large'));
    assert.ok(fired({ html: '<div><table><tr><td>cell</table><span>open' }).includes('html_unbalanced'));
    assert.ok(!fired({ html: '<ul><li>one<li>two</ul><p>para<p>para<a href="https://acme.test/unsubscribe">u</a>' }).includes('html_unbalanced'), 'optional end tags are fine');
});
test('hidden text and active content', () => {
    assert.ok(fired({ html: '<p>Hi</p><div style="display: none">cheap pills cheap pills cheap pills</div>' }).includes('hidden_text'));
    assert.ok(fired({ html: '<p>Hi</p><span style="font-size:0px">invisible words, lots of invisible words</span>' }).includes('hidden_text'));
    assert.ok(!fired({ html: '<style>p { color: red }</style><p>Hi there</p>' }).includes('hidden_text'), 'style content is not text');
    for (const html of ['<script>x()</script>', '<form action="https://x.test"></form>', '<iframe src="https://x.test"></iframe>', '<a href="javascript:alert(1)">x</a>', '<img src="x" onerror="alert(1)">']) {
        assert.ok(fired({ html }).includes('active_content'), html);
    }
});
test('from display name naming another domain', () => {
    assert.ok(fired({ from: '"support@paypal.com" <x@phish.test>' }).includes('from_name_mismatch'));
    assert.ok(fired({ from: 'PayPal.com Security <x@phish.test>' }).includes('from_name_mismatch'));
    assert.ok(!fired({ from: 'Acme.test Team <team@mail.acme.test>' }).includes('from_name_mismatch'));
    assert.ok(!fired({ from: 'team@acme.test' }).includes('from_name_mismatch'));
});
test('suspicious attachments', () => {
    assert.ok(fired({ attachments: [{ filename: 'invoice.pdf.exe' }] }).includes('suspicious_attachment'));
    assert.ok(fired({ attachments: [{ filename: 'Report.DOCM' }] }).includes('suspicious_attachment'));
    assert.ok(!fired({ attachments: [{ filename: 'invoice.pdf' }] }).includes('suspicious_attachment'));
});
test('the score is the capped sum of weights', () => {
    const r = analyzeContent({
        subject: 'FREE MONEY!!! ACT NOW',
        html: '<script>x</script><div style="display:none">hidden hidden hidden hidden</div><a href="http://198.51.100.1/">paypal.com</a><img src="a.png">',
        attachments: [{ filename: 'x.exe' }]
    });
    assert.equal(r.score, 10);
    assert.equal(r.verdict, 'fail');
    const sum = r.checks.reduce((s, c) => s + RULES.find((x) => x.id === c.id).weight, 0);
    assert.ok(sum > 10);
});
//# sourceMappingURL=content_rules.test.js.map