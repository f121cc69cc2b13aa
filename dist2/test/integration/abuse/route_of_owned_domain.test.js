import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TestOutbox } from '../../helpers/outbox.js';
import { DnsServer } from '../../helpers/dns_server.js';
import { RawSmtp } from '../../helpers/raw_smtp.js';
import { resolveRecipient } from '../../../inbound/mod.js';
/**
 * Inbound mail of a verified domain belongs to the organisation that verified it: another organisation cannot
 * add a route on the domain (403), and a route it added on a claim of its own, pending while the owner verified,
 * receives nothing.
 */
let dns;
let ob;
let owner;
let squatter;
before(async () => {
    dns = await DnsServer.start({});
    ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address, OB_DOMAIN_VERIFICATION: 'off' } });
    owner = await ob.org();
    squatter = await ob.org();
});
after(async () => { await ob.close(); await dns.close(); });
const route = (key, match) => ob.request('POST', '/v1/inbound/routes', { key, body: { match, action: { type: 'webhook', include_attachments: false } } });
async function rcpt(address) {
    const s = await RawSmtp.open(ob.proc.inbound.port);
    try {
        assert.match(await s.command('EHLO client.test'), /^250/);
        assert.match(await s.command('MAIL FROM:<a@sender.test>'), /^250/);
        return await s.command(`RCPT TO:<${address}>`);
    }
    finally {
        s.close();
    }
}
test('another organisation cannot route a verified domain\'s mail, nor take it with a route on a claim of its own', async () => {
    for (const match of [`*@${owner.domain}`, `support@${owner.domain}`.toUpperCase()]) {
        const r = await route(squatter.adminKey, match);
        assert.equal(r.status, 403, match);
        assert.equal(r.body.error.code, 'forbidden');
        assert.equal(r.body.error.field, 'match');
    }
    assert.equal((await route(owner.adminKey, `support@${owner.domain}`)).status, 201);
    const name = `later${process.pid}.example.net`;
    assert.equal((await route(squatter.adminKey, `*@${name}`)).status, 403, 'a domain nobody added cannot be routed');
    const squat = await ob.request('POST', '/v1/domains', { key: squatter.adminKey, body: { name } });
    assert.equal(squat.status, 201);
    const early = await route(squatter.adminKey, `*@${name}`);
    assert.equal(early.status, 201, 'a domain the organisation claimed may be routed');
    assert.match(await rcpt(`someone@${name}`), /^5\d\d/, 'a route on a pending claim receives nothing');
    const claim = await ob.request('POST', '/v1/domains', { key: owner.adminKey, body: { name } });
    assert.equal(claim.status, 201, 'a second organisation may claim the same name');
    assert.equal((await ob.request('POST', `/v1/domains/${claim.body.id}/verify`, { key: owner.adminKey })).body.status, 'verified');
    assert.match(await rcpt(`someone@${name}`), /^5\d\d/, 'the squatter\'s route does not take the owner\'s mail');
    assert.equal((await route(squatter.adminKey, `other@${name}`)).status, 403, 'a lapsed claim cannot be routed');
    const own = await route(owner.adminKey, `*@${name}`);
    assert.equal(own.status, 201);
    assert.match(await rcpt(`someone@${name}`), /^250/);
    const resolved = resolveRecipient(ob.proc.cp, `someone@${name}`);
    assert.equal(resolved.kind, 'route');
    assert.deepEqual(resolved.kind === 'route' ? resolved.routes.map((r) => r.id) : [], [own.body.id]);
});
//# sourceMappingURL=route_of_owned_domain.test.js.map