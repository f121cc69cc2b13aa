import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TestOutbox } from '../../helpers/outbox.js';
import { DnsServer } from '../../helpers/dns_server.js';
import { SmtpSink } from '../../helpers/smtp_sink.js';
import { EventWatcher } from '../../helpers/engine_env.js';
import { inboundClient } from '../../helpers/inbound.js';
// An asynchronous bounce (a DSN mailed back to the message's return path) is classified by the same classifier as
// an SMTP reply: a 5.7.1 policy block is a hard bounce of category `policy` and suppresses nothing; a 5.1.1 is a
// `mailbox` bounce and suppresses. The messages are really sent, and the DSNs go to the return path they carried.
let dns;
let sink;
let ob;
let org;
let key;
let events;
let smtp;
before(async () => {
    dns = await DnsServer.start({});
    sink = await SmtpSink.start();
    ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address, OB_SMTP_RELAY: sink.url } });
    org = await ob.org();
    key = await ob.key(org, ['send']);
    events = await EventWatcher.start(ob.proc.nc, org.orgId);
    smtp = inboundClient(ob);
});
after(async () => {
    smtp.close();
    events.stop();
    await ob.close();
    await sink.close();
    await dns.close();
});
/** Sends one message to `rcpt` through the API and returns its id and what the remote server received. */
async function sent(rcpt) {
    const res = await ob.request('POST', '/v1/messages/send', {
        key, body: { from: `News <news@${org.domain}>`, to: rcpt, subject: 'Hello', text: 'hi', track_opens: false, track_clicks: false }
    });
    assert.equal(res.status, 202, res.text);
    const id = res.body.id;
    await sink.until(() => sink.to(rcpt).length === 1);
    await events.until(() => events.of(id, 'delivered').length === 1);
    return { id, received: sink.to(rcpt)[0] };
}
/** A delivery status notification as a receiving MTA writes it (RFC 3464), about a message it had accepted. */
function dsn(received, recipient, status, diagnostic) {
    return [
        'From: Mail Delivery System <MAILER-DAEMON@mx.remote.test>', `To: ${received.mailFrom}`, 'Subject: Undelivered Mail Returned to Sender',
        'MIME-Version: 1.0', 'Content-Type: multipart/report; report-type=delivery-status; boundary="=_b"', '',
        '--=_b', 'Content-Type: text/plain; charset=us-ascii', '', 'Your message could not be delivered.', '',
        '--=_b', 'Content-Type: message/delivery-status', '',
        'Reporting-MTA: dns; mx.remote.test', '',
        `Final-Recipient: rfc822; ${recipient}`, 'Action: failed', `Status: ${status}`, `Diagnostic-Code: smtp; ${diagnostic}`, '',
        '--=_b', 'Content-Type: text/rfc822-headers', '',
        `From: news@${org.domain}`, `To: ${recipient}`, `Message-ID: ${received.messageId}`, 'Subject: Hello', '',
        '--=_b--', ''
    ].join('\r\n');
}
async function bounceBack(received, recipient, status, diagnostic) {
    await smtp.sendMail({ envelope: { from: '', to: [received.mailFrom] }, raw: dsn(received, recipient, status, diagnostic) });
}
test('a DSN with 5.7.1 is a policy bounce and suppresses nothing', async () => {
    const rcpt = 'blocked@remote.test';
    const { id, received } = await sent(rcpt);
    await bounceBack(received, rcpt, '5.7.1', '550 5.7.1 Message rejected due to local policy: DMARC');
    await events.until(() => events.of(id, 'bounced').length === 1);
    const d = events.of(id, 'bounced')[0].data;
    assert.equal(d.bounce_type, 'hard');
    assert.equal(d.bounce_code, '550');
    assert.equal(d.bounce_category, 'policy');
    assert.equal(ob.proc.cp.isSuppressed(org.orgId, rcpt), false);
});
test('a DSN with 5.1.1 is a mailbox bounce and suppresses the recipient', async () => {
    const rcpt = 'gone@remote.test';
    const { id, received } = await sent(rcpt);
    await bounceBack(received, rcpt, '5.1.1', '550 5.1.1 <gone@remote.test>: user unknown');
    await events.until(() => events.of(id, 'bounced').length === 1);
    const d = events.of(id, 'bounced')[0].data;
    assert.equal(d.bounce_type, 'hard');
    assert.equal(d.bounce_category, 'mailbox');
    assert.equal(ob.proc.cp.isSuppressed(org.orgId, rcpt), true);
});
//# sourceMappingURL=dsn_bounce_category.test.js.map