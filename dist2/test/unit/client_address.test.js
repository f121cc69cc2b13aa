import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../config/mod.js';
import { ClientAddresses } from '../../gateway/http/client_address.js';
import { clientIdentity } from '../../protocol/mod.js';
test('a client is its IPv4 address, also IPv4-mapped, or its IPv6 /64', () => {
    assert.equal(clientIdentity('203.0.113.7'), '203.0.113.7');
    assert.equal(clientIdentity('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1');
    assert.equal(clientIdentity('::ffff:198.51.100.9'), '198.51.100.9');
    assert.equal(clientIdentity('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(clientIdentity('2001:0db8:0001:0002:ffff:0:0:9'), '2001:db8:1:2::/64');
    assert.equal(clientIdentity('::1'), '0:0:0:0::/64');
    assert.equal(clientIdentity('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(clientIdentity('not-an-ip'), undefined);
});
test('without trusted proxies X-Forwarded-For is never read', () => {
    const c = new ClientAddresses([]);
    assert.equal(c.readsForwardedFor, false);
    assert.equal(c.of('203.0.113.7', '198.51.100.1'), '203.0.113.7');
});
test('behind trusted proxies the first untrusted address from the right is the client', () => {
    const c = new ClientAddresses(loadConfig({ OB_TRUSTED_PROXIES: '10.0.0.0/8,2001:db8:ffff::/48' }).http.trustedProxies);
    assert.equal(c.readsForwardedFor, true);
    // Peer not trusted: the header is ignored.
    assert.equal(c.of('203.0.113.7', '198.51.100.1'), '203.0.113.7');
    // Trusted peer: the rightmost entry; a client's own entries further left are not read.
    assert.equal(c.of('10.0.0.2', '198.51.100.1, 203.0.113.9'), '203.0.113.9');
    // Trusted hops in the chain are skipped.
    assert.equal(c.of('10.0.0.2', '203.0.113.9, 10.1.1.1, 10.2.2.2'), '203.0.113.9');
    assert.equal(c.of('0000:0000:0000:0000:0000:ffff:0a00:0002', '203.0.113.9'), '203.0.113.9');
    assert.equal(c.of('2001:db8:ffff::5', '2001:db8:1:2::77'), '2001:db8:1:2::/64');
    // Garbage stops the walk at the proxy that wrote it.
    assert.equal(c.of('10.0.0.2', '203.0.113.9, garbage'), '10.0.0.2');
    assert.equal(c.of('10.0.0.2', 'unknown, 10.1.1.1'), '10.1.1.1');
    // Only trusted hops: the leftmost is the best we know.
    assert.equal(c.of('10.0.0.2', '10.9.9.9'), '10.9.9.9');
    assert.equal(c.of('10.0.0.2', ''), '10.0.0.2');
});
//# sourceMappingURL=client_address.test.js.map