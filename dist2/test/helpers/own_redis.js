import { before, after } from 'node:test';
import { ServerProcess } from './servers.js';
import { connectRedis, redisReady } from '../../stores/clients/mod.js';
export function useOwnRedis() {
    const own = {};
    before(async () => {
        own.server = await ServerProcess.redis();
        own.redis = connectRedis(own.server.url, 'test');
        await redisReady(own.redis);
    });
    after(async () => {
        own.redis.disconnect();
        await own.server.dispose();
    });
    return own;
}
const FILLER = 'ob-test:filler:';
async function usedMemory(redis) {
    const info = await redis.info('memory');
    return Number(/^used_memory:(\d+)/m.exec(info)[1]);
}
/** Writes filler values of `bytes` until Redis refuses one with OOM; returns how many were written. */
async function fillWith(redis, bytes, from) {
    const value = 'x'.repeat(bytes);
    for (let i = from;; i++) {
        try {
            await redis.set(`${FILLER}${i}`, value);
        }
        catch (err) {
            if (/^OOM /.test(err.message))
                return i;
            throw err;
        }
    }
}
/**
 * Brings a Redis to `maxmemory` under `noeviction` with filler keys, as a full production Redis is: `maxmemory` is
 * set a few MB above what it holds, filled with large then small values until even a small write is refused, then
 * set a little below what it now holds, so keys expiring meanwhile do not make room for a write.
 */
export async function fillRedis(redis) {
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    await redis.config('SET', 'maxmemory', String(await usedMemory(redis) + 4 * 1024 * 1024));
    let n = await fillWith(redis, 64 * 1024, 0);
    n = await fillWith(redis, 1024, n);
    await fillWith(redis, 16, n);
    await redis.config('SET', 'maxmemory', String(await usedMemory(redis) - 256 * 1024));
}
/** Deletes the filler keys and leaves 64 MB of room (what an operator does by adding memory or removing data). */
export async function freeRedis(redis) {
    let cursor = '0';
    do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${FILLER}*`, 'COUNT', 1000);
        if (keys.length > 0)
            await redis.del(...keys);
        cursor = next;
    } while (cursor !== '0');
    await redis.config('SET', 'maxmemory', String(await usedMemory(redis) + 64 * 1024 * 1024));
}
//# sourceMappingURL=own_redis.js.map