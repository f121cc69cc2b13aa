import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createTransport } from 'nodemailer';
import { TestOutbox } from '../../helpers/outbox.js';
import { DnsServer } from '../../helpers/dns_server.js';
import { addRoute, rejectedCode } from '../../helpers/inbound.js';
import { RawSmtp } from '../../helpers/raw_smtp.js';
// A stranger can mail a routed address as often as they like; the inbound quotas answer at SMTP time, as MTAs do:
// 452 for a route past its quota of the window, 421 (and the connection closed) for a sending address past its own.
let dns;
let ob;
let org;
before(async () => {
    dns = await DnsServer.start({});
    ob = await TestOutbox.start({
        env: {
            OB_DNS_SERVERS: dns.address,
            OB_INBOUND_ROUTE_MAX_MESSAGES: '3',
            OB_INBOUND_ROUTE_MAX_BYTES: '100000',
            OB_INBOUND_SENDER_MAX_MESSAGES: '6'
        }
    });
    org = await ob.org();
});
after(async () => {
    await ob.close();
    await dns.close();
});
/** A client connecting from `localAddress` (another loopback address is another sending client). */
function client(localAddress) {
    return createTransport({ host: '127.0.0.1', port: ob.proc.inbound.port, secure: false, ignoreTLS: true, pool: false, localAddress });
}
const send = (smtp, to, body = 'hello') => smtp.sendMail({ envelope: { from: 'stranger@sender.test', to: [to] }, raw: `Subject: q\r\n\r\n${body}\r\n` });
async function refusals(quota) {
    const text = await ob.proc.metrics.render();
    const m = new RegExp(`^outbox_inbound_quota_refusals_total\\{quota="${quota}"\\} (\\d+)$`, 'm').exec(text);
    return m === null ? 0 : Number(m[1]);
}
test('a route past its messages of the window gets 452 at RCPT; other routes still receive', async () => {
    const smtp = client('127.0.0.1');
    await addRoute(ob, org, `full@${org.domain}`, false);
    await addRoute(ob, org, `other@${org.domain}`, false);
    for (let i = 0; i < 3; i++)
        assert.equal(await rejectedCode(send(smtp, `full@${org.domain}`)), 250);
    assert.equal(await rejectedCode(send(smtp, `full@${org.domain}`)), 452);
    const raw = await RawSmtp.open(ob.proc.inbound.port);
    assert.match(await raw.command('EHLO sender.test'), /^250/m);
    assert.match(await raw.command('MAIL FROM:<stranger@sender.test>'), /^250/);
    assert.match(await raw.command(`RCPT TO:<full@${org.domain}>`), /^452 Mailbox has received all the mail it takes for now/);
    assert.match(await raw.command(`RCPT TO:<other@${org.domain}>`), /^250/, 'another route of the same organisation');
    await raw.quit();
    assert.equal(await rejectedCode(send(smtp, `other@${org.domain}`)), 250);
    assert.ok(await refusals('route_messages') >= 2);
    smtp.close();
});
test('a route past its bytes of the window gets 452 at RCPT', async () => {
    const smtp = client('127.0.0.1');
    await addRoute(ob, org, `big@${org.domain}`, false);
    assert.equal(await rejectedCode(send(smtp, `big@${org.domain}`, 'x'.repeat(120_000))), 250, 'under the quota when it arrives');
    assert.equal(await rejectedCode(send(smtp, `big@${org.domain}`)), 452);
    assert.equal(await refusals('route_bytes'), 1);
    smtp.close();
});
test('a sending address past its messages of the window gets 421 at MAIL FROM and is disconnected; others are served', async () => {
    const flood = client('127.0.0.2');
    for (let i = 0; i < 6; i++) {
        await addRoute(ob, org, `r${i}@${org.domain}`, false);
        assert.equal(await rejectedCode(send(flood, `r${i}@${org.domain}`)), 250);
    }
    const raw = await RawSmtp.open(ob.proc.inbound.port, { localAddress: '127.0.0.2' });
    assert.match(await raw.command('EHLO sender.test'), /^250/m);
    assert.match(await raw.command('MAIL FROM:<stranger@sender.test>'), /^421 Too much mail from your address for now/);
    await raw.whenClosed();
    assert.equal(await rejectedCode(send(flood, `r0@${org.domain}`)), 421);
    assert.ok(await refusals('sender_messages') >= 2);
    // Another client address is counted on its own.
    const polite = client('127.0.0.3');
    assert.equal(await rejectedCode(send(polite, `r1@${org.domain}`)), 250);
    flood.close();
    polite.close();
});
//# sourceMappingURL=quotas.test.js.map