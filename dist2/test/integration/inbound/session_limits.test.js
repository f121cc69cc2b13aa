import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TestOutbox } from '../../helpers/outbox.js';
import { DnsServer } from '../../helpers/dns_server.js';
import { addRoute } from '../../helpers/inbound.js';
import { RawSmtp } from '../../helpers/raw_smtp.js';
/**
 * The inbound SMTP server's resource limits: sessions open at once (all senders, and per client address) and
 * how long one session may last. Clients on other loopback addresses (127.0.0.2, ...) stand for other senders.
 */
const DEADLINE_MS = 2000;
let dns;
let ob;
let org;
before(async () => {
    dns = await DnsServer.start({});
    ob = await TestOutbox.start({
        env: {
            OB_DNS_SERVERS: dns.address,
            OB_SMTP_INBOUND_MAX_CONNECTIONS: '4',
            OB_SMTP_INBOUND_MAX_CONNECTIONS_PER_ADDRESS: '2',
            OB_SMTP_INBOUND_SESSION_DEADLINE_MS: String(DEADLINE_MS)
        }
    });
    org = await ob.org();
    await addRoute(ob, org, `*@${org.domain}`, false);
});
after(async () => {
    await ob.close();
    await dns.close();
});
async function openFrom(localAddress) {
    return await RawSmtp.open(ob.proc.inbound.port, { localAddress });
}
test('a client address over its connection cap gets 421 and is closed; other addresses are not affected', async () => {
    const a1 = await openFrom('127.0.0.1');
    const a2 = await openFrom('127.0.0.1');
    assert.match(a1.greeting, /^220 /);
    assert.match(a2.greeting, /^220 /);
    const a3 = await openFrom('127.0.0.1');
    assert.match(a3.greeting, /^421 /);
    await a3.whenClosed();
    const b1 = await openFrom('127.0.0.2');
    assert.match(b1.greeting, /^220 /);
    // The sessions within the cap work as usual.
    assert.match(await a2.command('EHLO client.test'), /^250/);
    // A closed session frees its place.
    await a1.quit();
    const a4 = await openFrom('127.0.0.1');
    assert.match(a4.greeting, /^220 /);
    for (const s of [a2, b1, a4])
        await s.quit();
});
test('connections over the total cap get 421 and are closed', async () => {
    const open = [await openFrom('127.0.0.3'), await openFrom('127.0.0.3'), await openFrom('127.0.0.4'), await openFrom('127.0.0.4')];
    for (const s of open)
        assert.match(s.greeting, /^220 /);
    const over = await openFrom('127.0.0.5');
    assert.match(over.greeting, /^421 /);
    await over.whenClosed();
    await open[0].quit();
    const again = await openFrom('127.0.0.5');
    assert.match(again.greeting, /^220 /);
    for (const s of [...open.slice(1), again])
        await s.quit();
});
test('a session that trickles bytes is closed with 421 at its deadline', async () => {
    const s = await openFrom('127.0.0.6');
    const opened = Date.now();
    assert.match(await s.command('EHLO client.test'), /^250/);
    assert.match(await s.command('MAIL FROM:<a@sender.test>'), /^250/);
    assert.match(await s.command(`RCPT TO:<x@${org.domain}>`), /^250/);
    assert.match(await s.command('DATA'), /^354/);
    // One byte every 200 ms keeps the idle timeout (60 s) from ever firing.
    const trickle = setInterval(() => { if (!s.closed)
        s.write('x'); }, 200);
    try {
        const reply = await s.reply(DEADLINE_MS * 10);
        assert.match(reply, /^421 /);
        await s.whenClosed();
        assert.ok(Date.now() - opened >= DEADLINE_MS - 200, 'closed by the deadline, not before it');
    }
    finally {
        clearInterval(trickle);
        s.close();
    }
    // A new session from the same client is served.
    const next = await openFrom('127.0.0.6');
    assert.match(next.greeting, /^220 /);
    await next.quit();
});
//# sourceMappingURL=session_limits.test.js.map