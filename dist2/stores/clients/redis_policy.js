/**
 * The eviction policy Outbox needs. Any other policy lets Redis drop keys when it is full, and the keys it drops
 * first (`volatile-*`) are those with a time to live: idempotency records, schedule state, rate-limit buckets.
 */
export const REQUIRED_EVICTION_POLICY = 'noeviction';
/** Redis runs with an eviction policy other than `noeviction`, or would not tell which. */
export class RedisEvictionPolicyError extends Error {
    policy;
    code = 'redis_eviction_policy';
    constructor(policy, where) {
        super(policy === undefined
            ? `Redis at ${where} does not report its maxmemory-policy (neither CONFIG GET nor INFO memory answers it); ` +
                `Outbox needs maxmemory-policy ${REQUIRED_EVICTION_POLICY}`
            : `Redis at ${where} runs with maxmemory-policy ${policy}; Outbox needs ${REQUIRED_EVICTION_POLICY}, since an evicting Redis ` +
                'drops idempotency keys, schedule state and delivery progress when it is full. Set it in redis.conf ' +
                `("maxmemory-policy ${REQUIRED_EVICTION_POLICY}"), with CONFIG SET, or in the provider's parameter group`);
        this.policy = policy;
        this.name = 'RedisEvictionPolicyError';
    }
}
/**
 * Redis's `maxmemory-policy`: `CONFIG GET`, or where a managed Redis refuses CONFIG, the `maxmemory_policy` field
 * of `INFO memory`. Undefined when neither tells. Rejects only when Redis does not answer at all.
 */
export async function redisEvictionPolicy(redis) {
    try {
        const reply = await redis.config('GET', 'maxmemory-policy');
        if (reply.length >= 2 && reply[1] !== '')
            return reply[1];
    }
    catch (err) {
        // a refused command is a reply; a connection that does not answer is not
        if (!(err instanceof Error) || err.name !== 'ReplyError')
            throw err;
    }
    const info = await redis.info('memory');
    const m = /^maxmemory_policy:(\S+)/m.exec(info);
    return m?.[1];
}
/** Resolves when Redis runs with `noeviction`; otherwise rejects with RedisEvictionPolicyError. */
export async function assertNoEviction(redis, where) {
    const policy = await redisEvictionPolicy(redis);
    if (policy !== REQUIRED_EVICTION_POLICY)
        throw new RedisEvictionPolicyError(policy, where);
}
/**
 * Re-reads the eviction policy every `intervalMs` while the process runs, since an operator (or a managed
 * Redis's parameter change, or a failover to a differently configured replica) can change it after the start.
 * `ok` is what readiness and the `outbox_redis_noeviction` gauge report; `onChange` hears every change.
 * `unknown` (Redis not answering) keeps the last answer: an outage is what `outbox_redis_connected` reports.
 */
export class EvictionPolicyWatch {
    redis;
    onChange;
    current = { state: 'unknown' };
    timer;
    constructor(redis, intervalMs, onChange) {
        this.redis = redis;
        this.onChange = onChange;
        this.timer = setInterval(() => { void this.check(); }, intervalMs);
        this.timer.unref();
    }
    /** The policy last read is `noeviction` (true), something else (false), or was never read (undefined). */
    get ok() {
        return this.current.state === 'unknown' ? undefined : this.current.state === 'ok';
    }
    get policy() {
        return this.current.policy;
    }
    /** Reads the policy now; resolves to the state it leaves. */
    async check() {
        let policy;
        try {
            policy = await redisEvictionPolicy(this.redis);
        }
        catch {
            return this.current.state;
        }
        const state = policy === REQUIRED_EVICTION_POLICY ? 'ok' : 'evicting';
        if (state !== this.current.state || policy !== this.current.policy) {
            this.current = { state, ...(policy !== undefined ? { policy } : {}) };
            this.onChange(state, policy);
        }
        return state;
    }
    stop() {
        clearInterval(this.timer);
    }
}
//# sourceMappingURL=redis_policy.js.map