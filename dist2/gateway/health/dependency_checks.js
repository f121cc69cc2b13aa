import { redisHealth } from '../../stores/clients/mod.js';
import { jetStreamStoreFull } from './queue_room.js';
/** How long each readiness check may take before its dependency counts as `unavailable`. */
export const READINESS_CHECK_TIMEOUT_MS = 1000;
/** NATS answers a round trip within the timeout. */
export async function natsCheck(nc, timeoutMs = READINESS_CHECK_TIMEOUT_MS) {
    let timer;
    const deadline = new Promise((resolve) => { timer = setTimeout(() => resolve('unavailable'), timeoutMs); });
    try {
        return await Promise.race([nc.rtt().then(() => 'ok', () => 'unavailable'), deadline]);
    }
    finally {
        clearTimeout(timer);
    }
}
/**
 * Redis takes a write within the timeout: `full` when it answers but refuses writes at `maxmemory` (a Redis that
 * answers PING and reads yet cannot record events, rate limits or idempotency keys is not ready).
 */
export async function redisCheck(redis, timeoutMs = READINESS_CHECK_TIMEOUT_MS) {
    return await redisHealth(redis, timeoutMs);
}
/**
 * The streams a send writes to have room for one more message (`jetStreamStoreFull`): `full` while sends are being
 * refused with 503 `queue_full`, until delivery frees room.
 */
export async function queueCheck(nc, timeoutMs = READINESS_CHECK_TIMEOUT_MS) {
    let timer;
    const deadline = new Promise((resolve) => { timer = setTimeout(() => resolve('unavailable'), timeoutMs); });
    try {
        return await Promise.race([jetStreamStoreFull(nc).then((full) => full ? 'full' : 'ok', () => 'unavailable'), deadline]);
    }
    finally {
        clearTimeout(timer);
    }
}
//# sourceMappingURL=dependency_checks.js.map