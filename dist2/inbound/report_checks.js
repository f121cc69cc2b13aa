import { decodeVerp, verpRecipient } from '../protocol/mod.js';
import { ownMessageId } from './reports.js';
export const DROP_REASONS = ['unknown_key', 'forged_tag', 'unknown_message', 'other_organisation', 'not_our_message', 'recipient_mismatch', 'unreadable'];
/** Drops a report: counted in `outbox_inbound_reports_dropped_total{reason}`, and one warning each. */
export class ReportDrops {
    log;
    metrics;
    constructor(log, metrics) {
        this.log = log;
        this.metrics = metrics;
    }
    drop(reason, fields) {
        this.metrics.reportsDropped[reason].inc();
        // one line of the security log (docs/security.md): a dropped report is most often a forgery
        this.log.warn({ kind: 'security', event: 'report.dropped', ...fields, reason }, 'report dropped: it acts on no message and recipient of ours');
    }
}
/** `inboundId`: the id the inbound message got, for the log line. */
async function messageOf(deps, messageId, orgId, inboundId) {
    const msg = await deps.messages.messageRecipients(messageId);
    if (msg === undefined)
        deps.drops.drop('unknown_message', { id: inboundId, message_id: messageId });
    else if (msg.orgId !== orgId)
        deps.drops.drop('other_organisation', { id: inboundId, message_id: messageId, org_id: orgId });
    else
        return msg;
    return undefined;
}
/** Mail to a VERP address: the recipient is the one whose tag verifies under the key the address names. */
export async function checkVerp(deps, verp, orgId, inboundId) {
    const key = deps.cp.verpKeys.key(verp.keyId);
    if (key === undefined) {
        deps.drops.drop('unknown_key', { id: inboundId, message_id: verp.messageId, key_id: verp.keyId });
        return undefined;
    }
    const msg = await messageOf(deps, verp.messageId, orgId, inboundId);
    if (msg === undefined)
        return undefined;
    const recipient = verpRecipient(verp, key, msg.recipients);
    if (recipient === undefined) {
        deps.drops.drop('forged_tag', { id: inboundId, message_id: verp.messageId, org_id: orgId });
        return undefined;
    }
    return { orgId, messageId: verp.messageId, recipients: [recipient], tags: msg.tags, environment: msg.environment };
}
/** A report through a route: the original Message-ID must be one of ours, of the route's organisation. */
export async function checkRouted(deps, report, orgId, inboundId) {
    const own = ownMessageId(report.originalMessageId);
    if (own === undefined) {
        deps.drops.drop('not_our_message', { id: inboundId, org_id: orgId, original_message_id: report.originalMessageId ?? null });
        return undefined;
    }
    const msg = await messageOf(deps, own.messageId, orgId, inboundId);
    if (msg === undefined)
        return undefined;
    const recipients = provenRecipients(deps, report, own.messageId, msg.recipients);
    return { orgId, messageId: own.messageId, recipients, tags: msg.tags, environment: msg.environment };
}
/**
 * The recipients a routed report about `messageId` may name: the one a VERP address of this message in the
 * original's headers was issued for; else, without one, the message's recipient when it had only one; else none
 * (every recipient the report names is then dropped as `recipient_mismatch`).
 */
function provenRecipients(deps, report, messageId, recipients) {
    for (const address of report.originalReturnPaths ?? []) {
        const verp = decodeVerp(address);
        if (verp === undefined || verp.messageId !== messageId)
            continue;
        const key = deps.cp.verpKeys.key(verp.keyId);
        const recipient = key === undefined ? undefined : verpRecipient(verp, key, recipients);
        if (recipient !== undefined)
            return [recipient];
    }
    return recipients.length === 1 ? recipients : [];
}
//# sourceMappingURL=report_checks.js.map