import { jetstream } from '@nats-io/jetstream';
import { eventSubject, newId, randomToken } from '../../protocol/mod.js';
/**
 * Webhook records are written straight to the control plane (`cp.webhooks.put`), as the CRUD API would,
 * and events are published to OB_EVENTS exactly as the delivery engine publishes them.
 */
export async function putWebhook(ob, org, opts) {
    const now = new Date().toISOString();
    const record = {
        id: newId('wh'),
        org_id: org.orgId,
        url: opts.url,
        events: opts.events,
        secret: `whsec_${randomToken(32)}`,
        status: opts.status ?? 'active',
        created_at: now,
        updated_at: now
    };
    await ob.proc.cp.webhooks.put(`${org.orgId}.${record.id}`, record);
    return record;
}
export async function setWebhookStatus(ob, w, status) {
    await ob.proc.cp.webhooks.modify(`${w.org_id}.${w.id}`, (cur) => ({ ...cur, status, updated_at: new Date().toISOString() }));
}
export function webhookNow(ob, w) {
    return ob.proc.cp.webhooks.get(`${w.org_id}.${w.id}`);
}
export async function publishEvent(ob, org, type, data = {}) {
    const record = {
        id: newId('evt'),
        type,
        timestamp: new Date().toISOString(),
        org_id: org.orgId,
        message_id: 'msg_0000000000000000000000000a',
        data: { message_id: 'msg_0000000000000000000000000a', to: 'a@example.net', metadata: { order: '42' }, ...data }
    };
    await jetstream(ob.proc.nc).publish(eventSubject(org.orgId, type), JSON.stringify(record), { msgID: record.id });
    return record;
}
/** Polls `check` until it returns true, or fails after `timeoutMs`. */
export async function eventually(check, what, timeoutMs = 20_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
        if (Date.now() > deadline)
            throw new Error(`timed out waiting for: ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
}
export const sleep = async (ms) => { await new Promise((resolve) => setTimeout(resolve, ms)); };
//# sourceMappingURL=webhooks.js.map