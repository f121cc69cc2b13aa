import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createTransport } from 'nodemailer';
import { TestOutbox } from '../../helpers/outbox.js';
import { DnsServer } from '../../helpers/dns_server.js';
import { EventReader } from '../../helpers/events.js';
import { inboundClient, addRoute } from '../../helpers/inbound.js';
const SIGNER = 'signer.test';
const SELECTOR = 'mail2026';
let dns;
let ob;
let org;
let events;
let smtp;
let signed;
before(async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    dns = await DnsServer.start({
        TXT: {
            [`${SELECTOR}._domainkey.${SIGNER}`]: [`v=DKIM1; k=rsa; p=${p}`],
            [SIGNER]: ['v=spf1 ip4:127.0.0.1 -all'],
            [`_dmarc.${SIGNER}`]: ['v=DMARC1; p=reject']
        }
    });
    ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address } });
    org = await ob.org();
    await addRoute(ob, org, `*@${org.domain}`, false);
    events = await EventReader.open(ob.proc.nc, org.orgId);
    smtp = inboundClient(ob);
    // nodemailer composes and DKIM-signs; the stream transport hands back the signed bytes.
    const composer = createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
    const out = await composer.sendMail({
        from: `news@${SIGNER}`,
        to: `in@${org.domain}`,
        subject: 'Signed message',
        text: 'The original body of the signed message.',
        dkim: { domainName: SIGNER, keySelector: SELECTOR, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }
    });
    signed = out.message.toString('utf8');
});
after(async () => {
    smtp.close();
    events.close();
    await ob.close();
    await dns.close();
});
test('a DKIM-signed message from an SPF-authorised address passes SPF, DKIM and DMARC', async () => {
    assert.match(signed, /^DKIM-Signature:/m);
    await smtp.sendMail({ envelope: { from: `news@${SIGNER}`, to: [`in@${org.domain}`] }, raw: signed });
    const [e] = await events.waitFor('inbound.received');
    assert.deepEqual(e.data.authentication, { spf: 'pass', dkim: 'pass', dmarc: 'pass' });
});
test('the same message with its body altered fails DKIM', async () => {
    const tampered = signed.replace('The original body', 'A modified body');
    assert.notEqual(tampered, signed);
    await smtp.sendMail({ envelope: { from: `news@${SIGNER}`, to: [`in@${org.domain}`] }, raw: tampered });
    const all = await events.waitFor('inbound.received', 2);
    const auth = all[1].data.authentication;
    assert.equal(auth.dkim, 'fail');
    assert.equal(auth.spf, 'pass', 'SPF depends on the envelope and IP, not the body');
});
//# sourceMappingURL=dkim.test.js.map