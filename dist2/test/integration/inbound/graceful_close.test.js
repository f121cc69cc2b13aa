import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { TestOutbox } from '../../helpers/outbox.js';
import { DnsServer } from '../../helpers/dns_server.js';
import { addRoute } from '../../helpers/inbound.js';
import { RawSmtp } from '../../helpers/raw_smtp.js';
let dns;
let ob;
let org;
before(async () => {
    dns = await DnsServer.start({});
    ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address } });
    org = await ob.org();
    await addRoute(ob, org, `*@${org.domain}`, false);
});
after(async () => {
    await ob.close();
    await dns.close();
});
test('drain stops accepting connections and answers 421 to a session still open at the deadline', async () => {
    const port = ob.proc.inbound.port;
    const s = await RawSmtp.open(port);
    assert.match(await s.command('EHLO client.test'), /^250/);
    assert.match(await s.command('MAIL FROM:<a@sender.test>'), /^250/);
    const draining = ob.proc.inbound.drain(600);
    // New connections are refused at once.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const refused = await new Promise((resolve) => {
        const c = connect(port, '127.0.0.1');
        c.once('connect', () => { c.destroy(); resolve(false); });
        c.once('error', () => resolve(true));
    });
    assert.equal(refused, true);
    // The idle straggler is told to go away when the deadline passes.
    assert.match(await s.reply(3000), /^421 /);
    await draining;
    s.close();
});
//# sourceMappingURL=graceful_close.test.js.map