import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyTracking, cachedTrackingPlan, rewriteHtml } from '../../../engine/actor/tracking.js';
const links = { openUrl: 'https://t.example/t/o/OPEN', clickUrl: (u) => `https://t.example/t/c/${encodeURIComponent(u)}` };
test('http links are rewritten, other attributes and text stay as written', () => {
    const html = '<html><body><p class="x">Hi &amp; bye</p><A HREF="https://a.example/x?y=1&amp;z=2" target=_blank>go</A><a href=\'mailto:a@b.c\'>m</a><a href="#top">t</a></body></html>';
    const out = rewriteHtml(html, links);
    assert.ok(out.includes('<p class="x">Hi &amp; bye</p>'));
    assert.ok(out.includes(`href="https://t.example/t/c/${encodeURIComponent('https://a.example/x?y=1&z=2')}" target=_blank>go</A>`), out);
    assert.ok(out.includes("<a href='mailto:a@b.c'>m</a>"));
    assert.ok(out.includes('<a href="#top">t</a>'));
    assert.ok(out.endsWith('<img src="https://t.example/t/o/OPEN" width="1" height="1" alt="" style="display:none;border:0" /></body></html>'), out);
});
test('without a body element the pixel goes at the end; nothing tracked leaves the html unchanged', () => {
    const html = '<p>hello <a href=http://x.example/>x</a></p>';
    const out = rewriteHtml(html, links);
    assert.ok(out.startsWith('<p>hello <a href="https://t.example/t/c/http%3A%2F%2Fx.example%2F">x</a></p>'), out);
    assert.ok(out.endsWith('/t/o/OPEN" width="1" height="1" alt="" style="display:none;border:0" />'));
    assert.equal(rewriteHtml(html, {}), html);
});
test('links after </body> are still rewritten and the pixel goes before </body>', () => {
    const out = rewriteHtml('<body><a href="https://a.example/1">1</a></body><a href="https://a.example/2">2</a>', links);
    assert.equal(out.match(/t\/c\//g)?.length, 2);
    assert.ok(out.indexOf('/t/o/OPEN') < out.indexOf('</body>'));
});
test('a plan found once per html body gives each recipient the same html a full rewrite gives', () => {
    const html = '<html><body><A HREF="https://a.example/x?y=1&amp;z=2">go</A><a href="#top">t</a><a href=" http://b.example/ ">b</a></body><a href="https://c.example/">c</a></html>';
    const plan = cachedTrackingPlan(html);
    assert.equal(cachedTrackingPlan(html), plan, 'the second message with this body is not parsed again');
    for (const r of ['one', 'two']) {
        const perRecipient = { openUrl: `https://t.example/t/o/${r}`, clickUrl: (u) => `https://t.example/t/c/${r}/${encodeURIComponent(u)}` };
        assert.equal(applyTracking(plan, perRecipient), rewriteHtml(html, perRecipient));
        assert.equal(applyTracking(plan, { openUrl: perRecipient.openUrl }), rewriteHtml(html, { openUrl: perRecipient.openUrl }));
        assert.ok(applyTracking(plan, perRecipient).includes(`/t/c/${r}/`));
    }
    assert.deepEqual(plan.links.map((l) => l.url), ['https://a.example/x?y=1&z=2', 'http://b.example/', 'https://c.example/']);
});
//# sourceMappingURL=tracking.test.js.map