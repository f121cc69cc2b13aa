import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unsafeHeader } from '../../gateway/http/header_guard.js';
import { isTrackableUrl } from '../../protocol/mod.js';
test('a header name or value with CR, LF or NUL is named; clean headers pass', () => {
    assert.equal(unsafeHeader({ Location: 'https://a.example/x?y=1' }, undefined, { 'Retry-After': '1' }), undefined);
    assert.equal(unsafeHeader({ A: 'ok' }, { Location: 'https://a.example/\r\nSet-Cookie: x=1' }), 'Location');
    assert.equal(unsafeHeader({ Location: 'https://a.example/\nx' }), 'Location');
    assert.equal(unsafeHeader({ Location: 'https://a.example/\rx' }), 'Location');
    assert.equal(unsafeHeader({ 'X-A': 'a\u0000b' }), 'X-A');
    assert.equal(unsafeHeader({ 'X-A\r\nSet-Cookie': 'v' }), 'X-A\r\nSet-Cookie');
});
test('only absolute http(s) URLs without control characters are trackable', () => {
    for (const ok of ['https://a.example/', 'http://a.example/p?q=1#f', 'HTTPS://A.EXAMPLE/ü', 'https://a.example/%0D%0A'])
        assert.equal(isTrackableUrl(ok), true, ok);
    for (const bad of ['https://a.example/\r\nSet-Cookie: x', 'https://a.example/\n', 'https://a.\texample/', 'https://a.example/\u0000', 'https://a.example/\u007f',
        'javascript:alert(1)', 'mailto:a@b.example', 'ftp://a.example/', '//a.example/', '/relative', 'https://[bad', ''])
        assert.equal(isTrackableUrl(bad), false, JSON.stringify(bad));
});
//# sourceMappingURL=header_guard.test.js.map