import { THROTTLE_LUA } from './throttle.lua.js';
export function throttleKey(host, ratePerS) {
    return `ob:thr:${host.toLowerCase()}:${ratePerS}:1`;
}
/**
 * Destination shaping shared by every engine process: at most `ratePerS` messages per second to one MX host
 * (burst of one second's worth), as a GCRA in Redis. The key carries the limit itself, so changing the rate
 * starts a fresh bucket instead of misreading an old one. A throttled send is not a failure: the caller gets
 * the delay and hands the message back to JetStream for that long.
 */
export class DestinationThrottle {
    ratePerS;
    redis;
    constructor(redis, ratePerS) {
        this.ratePerS = ratePerS;
        redis.defineCommand('obThrottle', { numberOfKeys: 1, lua: THROTTLE_LUA });
        this.redis = redis;
    }
    /** 0 when a message to `host` may go now, else milliseconds to wait. */
    async check(host) {
        if (this.ratePerS === 0)
            return 0;
        try {
            return await this.redis.obThrottle(throttleKey(host, this.ratePerS), 1000 / this.ratePerS, this.ratePerS);
        }
        catch {
            return 0; // Redis unreachable: shaping is a courtesy to receivers, not a reason to stop delivering
        }
    }
}
//# sourceMappingURL=throttle.js.map