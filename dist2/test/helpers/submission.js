import nodemailer from 'nodemailer';
import { authenticate } from 'mailauth';
import { TestOutbox } from './outbox.js';
import { freePort } from './ports.js';
import { SmtpSink } from './smtp_sink.js';
export async function startSubmissionScenario(env = {}, plan) {
    const sink = await SmtpSink.start();
    const port = await freePort();
    const ob = await TestOutbox.start({ env: { OB_ROLE: 'all', OB_SMTP_RELAY: sink.url, OB_SMTP_SUBMISSION_PORT: String(port), ...env } });
    const org = await ob.org(plan);
    return {
        ob,
        sink,
        org,
        port,
        async close() {
            await ob.close();
            await sink.close();
        }
    };
}
/** nodemailer as an application configures it: STARTTLS required, user `apikey`, the key as the password. */
export function submissionClient(port, key, opts = {}) {
    return nodemailer.createTransport({
        host: '127.0.0.1',
        port,
        secure: false,
        requireTLS: true,
        auth: { user: 'apikey', pass: key },
        // the certificate is the self-signed one made at start
        tls: { rejectUnauthorized: false },
        ...opts
    });
}
/** The `msg_…` id of a `250 2.0.0 queued as msg_…` reply. */
export function queuedId(response) {
    const m = /^250 2\.0\.0 queued as (msg_[0-9a-z]{26})\b/.exec(response);
    if (m === null)
        throw new Error(`not a queued reply: ${response}`);
    return m[1];
}
/** mailauth's DKIM verdict on `raw`, with the domain's published TXT record as the only DNS answer. */
export async function dkimResult(ob, org, raw) {
    const domain = ob.proc.cp.domain(org.orgId, org.domainId);
    const txt = domain.records.find((r) => r.name === `${domain.dkim_selector}._domainkey.${domain.name}`);
    const resolver = async (name, rr) => {
        if (rr === 'TXT' && name === txt.name)
            return [[txt.value]];
        throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    };
    const result = await authenticate(raw, { ip: '127.0.0.1', helo: 'engine.test', sender: 'x@y.z', mta: 'sink.test', resolver });
    const sig = result.dkim.results[0];
    return sig?.signingDomain === org.domain ? sig.status.result : `none for ${org.domain}`;
}
//# sourceMappingURL=submission.js.map