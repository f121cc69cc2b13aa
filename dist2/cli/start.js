import { pino } from 'pino';
import { loadConfig } from '../config/mod.js';
import { startOutbox } from './outbox_process.js';
import { startEmbeddedServices } from './embedded_services.js';
/** Grace on top of OB_SHUTDOWN_TIMEOUT_MS for closing NATS, Redis and the embedded servers. */
const CLOSE_GRACE_MS = 5_000;
/**
 * `outbox start`: the embedded servers when needed, then the parts OB_ROLE names. The first SIGTERM or
 * SIGINT drains in order and exits 0; a second one exits at once.
 */
export async function runStart(env, say) {
    const config = loadConfig(env);
    // Synchronous writes: the last lines before exit (shutdown, errors) must not be lost in a buffer.
    const log = pino({ level: config.logLevel, base: { role: config.role } }, pino.destination({ dest: 1, sync: true }));
    let embedded;
    let proc;
    let starting = Promise.resolve();
    let stopping = false;
    const shutdown = async (signal) => {
        if (stopping) {
            log.warn({ signal }, 'second signal: exiting without draining');
            process.exit(1);
        }
        stopping = true;
        log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: draining');
        setTimeout(() => {
            log.error('shutdown deadline passed; exiting');
            process.exit(1);
        }, config.shutdownTimeoutMs + CLOSE_GRACE_MS).unref();
        await starting.catch(() => { });
        await proc?.stop();
        await embedded?.stop();
        log.info('stopped');
        process.exit(0);
    };
    process.on('SIGTERM', () => { void shutdown('SIGTERM'); });
    process.on('SIGINT', () => { void shutdown('SIGINT'); });
    const start = async () => {
        embedded = await startEmbeddedServices({
            natsConfigured: config.nats.configured,
            redisConfigured: config.redis.configured,
            dataDir: config.dataDir,
            storeBytes: config.nats.storeBytes,
            env,
            log,
            say
        });
        if (stopping)
            return;
        proc = await startOutbox(config, log);
        log.info({ port: proc.gateway?.port }, 'outbox started');
    };
    starting = start();
    try {
        await starting;
    }
    catch (err) {
        await embedded?.stop().catch(() => { });
        throw err;
    }
}
//# sourceMappingURL=start.js.map