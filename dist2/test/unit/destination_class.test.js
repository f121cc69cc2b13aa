import { test } from 'node:test';
import assert from 'node:assert/strict';
import { destinationClass, webhookResult } from '../../stores/metrics/mod.js';
test('an MX host name gives its provider class; anything else is other', () => {
    assert.equal(destinationClass('gmail-smtp-in.l.google.com'), 'gmail');
    assert.equal(destinationClass('ASPMX.L.GOOGLE.COM.'), 'gmail', 'Google Workspace, upper case, trailing dot');
    assert.equal(destinationClass('acme-com.mail.protection.outlook.com'), 'microsoft');
    assert.equal(destinationClass('hotmail-com.olc.protection.outlook.com'), 'microsoft');
    assert.equal(destinationClass('mta5.am0.yahoodns.net'), 'yahoo');
    assert.equal(destinationClass('mx01.mail.icloud.com'), 'apple');
    assert.equal(destinationClass('mx.example.com'), 'other');
    assert.equal(destinationClass('google.com.evil.test'), 'other', 'a suffix, not a substring');
    assert.equal(destinationClass('notgoogle.com'), 'other');
    assert.equal(destinationClass('192.0.2.1'), 'other');
});
test('webhook error codes fall into a closed set of results', () => {
    assert.equal(webhookResult(null), 'success');
    assert.equal(webhookResult('http_500'), 'http_error');
    assert.equal(webhookResult('timeout'), 'timeout');
    assert.equal(webhookResult('connection_refused'), 'network');
    assert.equal(webhookResult('ssrf_blocked'), 'blocked');
    assert.equal(webhookResult('invalid_url'), 'blocked');
});
//# sourceMappingURL=destination_class.test.js.map