import { cpus, totalmem, type, release } from 'node:os';
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
/** The machine a result was measured on, with the server versions asked from the servers themselves. */
export async function describeMachine(natsUrl, redisUrl) {
    const nc = await connect({ servers: natsUrl });
    const natsVersion = nc.info?.version ?? 'unknown';
    await nc.close();
    const redis = new Redis(redisUrl, { lazyConnect: true });
    await redis.connect();
    const info = await redis.info('server');
    redis.disconnect();
    const cpuList = cpus();
    return {
        cpus: cpuList.length,
        cpu_model: cpuList[0]?.model.trim() ?? 'unknown',
        memory_gb: Math.round(totalmem() / 2 ** 30 * 10) / 10,
        os: `${type()} ${release()}`,
        node: process.version,
        nats_server: natsVersion,
        redis_server: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown'
    };
}
//# sourceMappingURL=machine.js.map