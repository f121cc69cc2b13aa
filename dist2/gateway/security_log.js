import { presentedKeyPrefix } from './auth.js';
export function actorOf(ctx) {
    return { orgId: ctx.auth.org.id, keyId: ctx.auth.key.id, address: ctx.ip };
}
export class SecurityLog {
    log;
    constructor(log) {
        this.log = log.child({ kind: 'security' });
    }
    /** A request or socket that presented no valid key (`credential`: its Authorization value, `Bearer …`); `reason` is the answer's message, which names no key. */
    authFailed(f) {
        const prefix = presentedKeyPrefix(f.credential);
        this.log.warn({
            event: 'auth.failed',
            transport: f.transport,
            address: f.address,
            ...(prefix !== undefined ? { key_prefix: prefix } : {}),
            reason: f.reason
        }, 'authentication failed');
    }
    change(event, actor, target) {
        this.log.info({ event, org_id: actor.orgId, actor_key_id: actor.keyId, address: actor.address, ...target }, event);
    }
}
//# sourceMappingURL=security_log.js.map