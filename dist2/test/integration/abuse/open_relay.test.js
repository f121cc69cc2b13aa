import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TestOutbox } from '../../helpers/outbox.js';
import { DnsServer } from '../../helpers/dns_server.js';
import { addRoute } from '../../helpers/inbound.js';
import { RawSmtp } from '../../helpers/raw_smtp.js';
/**
 * The inbound server is never a relay: with a catch-all route on our domain, every recipient form that could
 * carry mail onward (percent hack, bang path, source route, quoted local part with @, address literal, foreign
 * domain) is refused with a 5xx at RCPT TO, while a plain address of the domain is accepted.
 */
let dns;
let ob;
let org;
before(async () => {
    dns = await DnsServer.start({});
    ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address } });
    org = await ob.org();
    await addRoute(ob, org, `*@${org.domain}`, false);
});
after(async () => { await ob.close(); await dns.close(); });
test('open-relay recipient forms are refused with 5xx; a plain address of our domain is accepted', async () => {
    const d = org.domain;
    const relayForms = [
        `user%victim.example@${d}`,
        `victim.example!user@${d}`,
        `@${d},@relay.example:user@victim.example`,
        `@${d}:user@victim.example`,
        'user@victim.example',
        `user@${d}.victim.example`,
        'user@[127.0.0.1]',
        `user@[${'127.0.0.1'}]`,
        `"user@victim.example"@${d}`,
        `"user%victim.example"@${d}`,
        'postmaster@victim.example',
        `user@${d}@victim.example`
    ];
    const s = await RawSmtp.open(ob.proc.inbound.port);
    try {
        assert.match(await s.command('EHLO client.test'), /^250/);
        assert.match(await s.command('MAIL FROM:<a@sender.test>'), /^250/);
        for (const rcpt of relayForms) {
            const reply = await s.command(`RCPT TO:<${rcpt}>`);
            assert.match(reply, /^5\d\d/, `${rcpt} → ${reply.trim()}`);
        }
        assert.match(await s.command(`RCPT TO:<plain@${d}>`), /^250/, 'a plain address of our domain is accepted');
        assert.match(await s.command('RSET'), /^250/);
    }
    finally {
        s.close();
    }
});
//# sourceMappingURL=open_relay.test.js.map