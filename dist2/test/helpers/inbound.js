import { createTransport } from 'nodemailer';
import { newId } from '../../protocol/mod.js';
/** A nodemailer client for the test Outbox's inbound port: plain SMTP, no pooling, no TLS. */
export function inboundClient(ob) {
    return createTransport({ host: '127.0.0.1', port: ob.proc.inbound.port, secure: false, ignoreTLS: true, pool: false });
}
/** Writes a route straight to the control plane, as the routes API does. */
export async function addRoute(ob, org, match, includeAttachments) {
    const r = {
        id: newId('rt'),
        org_id: org.orgId,
        match,
        action: { type: 'webhook', include_attachments: includeAttachments },
        created_at: new Date().toISOString()
    };
    await ob.proc.cp.routes.put(`${org.orgId}.${r.id}`, r);
    return r;
}
/** The SMTP reply code of a rejected send (nodemailer puts it on the error). */
export async function rejectedCode(p) {
    try {
        await p;
    }
    catch (err) {
        return err.responseCode ?? -1;
    }
    return 250;
}
//# sourceMappingURL=inbound.js.map