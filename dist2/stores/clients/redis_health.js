import { REDIS_KEYS, isStoreFull } from '../../protocol/mod.js';
/** How long the probe key lives; any later probe overwrites it. */
const PROBE_TTL_MS = 10_000;
/** Whether `err` is Redis refusing a write because it is at `maxmemory` (error reply code `OOM`). */
export const isRedisFull = isStoreFull;
/**
 * Probes Redis with a small write: answering PING is not enough, since a Redis at `maxmemory` answers PING and
 * reads while refusing every write. Resolves within `timeoutMs`, never rejects.
 */
export async function redisHealth(redis, timeoutMs) {
    let timer;
    const deadline = new Promise((resolve) => { timer = setTimeout(() => resolve('unavailable'), timeoutMs); });
    const probe = redis.set(REDIS_KEYS.healthProbe, Date.now(), 'PX', PROBE_TTL_MS).then(() => 'ok', (err) => isRedisFull(err) ? 'full' : 'unavailable');
    try {
        return await Promise.race([probe, deadline]);
    }
    finally {
        clearTimeout(timer);
    }
}
/**
 * The last known Redis health, probed every `everyMs` in the background, for paths that must not add a round
 * trip per message (inbound SMTP). `noteFailure` lets a caller that met OOM say so at once.
 */
export class RedisHealthWatch {
    redis;
    everyMs;
    current = 'ok';
    timer;
    probing = false;
    constructor(redis, everyMs = 1000) {
        this.redis = redis;
        this.everyMs = everyMs;
    }
    get health() {
        return this.current;
    }
    start() {
        this.timer = setInterval(() => { void this.probe(); }, this.everyMs);
        this.timer.unref();
        return this;
    }
    stop() {
        clearInterval(this.timer);
    }
    /** A write that failed with OOM: full until the next probe says otherwise. */
    noteFailure(err) {
        if (isRedisFull(err))
            this.current = 'full';
    }
    async probe() {
        if (this.probing)
            return;
        this.probing = true;
        try {
            this.current = await redisHealth(this.redis, this.everyMs);
        }
        finally {
            this.probing = false;
        }
    }
}
//# sourceMappingURL=redis_health.js.map