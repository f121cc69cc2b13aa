/** Codes our MX look-up sets (engine/actor/mx.ts) for a domain that cannot receive mail at all. */
export const NO_MAIL_HOST = 'ENOMAILHOST';
export const NULL_MX = 'ENULLMX';
/** Every mail host of the domain is `localhost` or on a loopback, private, link-local or other non-public address. */
export const NON_PUBLIC_MAIL_HOST = 'ENONPUBLICMAILHOST';
const BUILD_ERRORS = new Set(['EFILEACCESS', 'EURLACCESS', 'ECONFIG', 'EMAXRECIPIENTS']);
function text(v) {
    return typeof v === 'string' ? v.replace(/\s+/g, ' ').trim() : '';
}
/** Outcome of a `sendMail` that resolved: nodemailer resolves only when the server accepted the data. */
export function classifyAccepted(info) {
    return { kind: 'delivered', response: text(info.response) || '250 OK' };
}
export function classifyError(err) {
    const code = typeof err.code === 'string' ? err.code : '';
    const reply = typeof err.responseCode === 'number' ? err.responseCode : Number.NaN;
    const response = text(err.response);
    const message = text(err.message);
    if (reply >= 500 && reply < 600)
        return { kind: 'bounced', code: String(reply), message: response || message };
    if (reply >= 400 && reply < 500)
        return { kind: 'deferred', response: response || `${reply} ${message}` };
    if (code === NO_MAIL_HOST)
        return { kind: 'bounced', code: '550', message: `5.1.2 ${message}` };
    if (code === NULL_MX)
        return { kind: 'bounced', code: '556', message: `5.1.10 ${message}` };
    // X.4.4 "unable to route": a `domain` bounce
    if (code === NON_PUBLIC_MAIL_HOST)
        return { kind: 'bounced', code: '550', message: `5.4.4 ${message}`, suppress: false };
    if (BUILD_ERRORS.has(code) || (code === 'EENVELOPE' && Number.isNaN(reply)))
        return { kind: 'failed', category: 'unbuildable', reason: message || code };
    const what = code !== '' ? `${code}: ${message}` : message;
    return { kind: 'deferred', response: what || 'delivery failed for an unknown reason' };
}
/**
 * Whether a failed attempt should go on to the next MX host at once: only when no server answered at all
 * (refused, unreachable, timed out, TLS or socket failure). A server's 4xx or 5xx speaks for the domain.
 */
export function tryNextHost(err) {
    return typeof err.responseCode !== 'number' && classifyError(err).kind === 'deferred';
}
//# sourceMappingURL=classify.js.map