import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { pino } from 'pino';
import { Redis } from 'ioredis';
import { loadConfig } from '../../../config/mod.js';
import { startOutbox } from '../../../cli/outbox_process.js';
import { ServerProcess, binary } from '../../helpers/servers.js';
import { freePort, waitForPort } from '../../helpers/ports.js';
test('a start that fails setting up its streams leaves no NATS or Redis connection open', async () => {
    // a NATS server without JetStream: connecting works, creating the streams does not
    const port = await freePort();
    const monitor = await freePort();
    const nats = spawn(binary('nats-server'), ['-a', '127.0.0.1', '-p', String(port), '-m', String(monitor)], { stdio: 'ignore' });
    const redis = await ServerProcess.redis();
    const probe = new Redis(redis.url);
    try {
        await waitForPort(port);
        await waitForPort(monitor);
        const config = loadConfig({ NATS_URL: `nats://127.0.0.1:${port}`, REDIS_URL: redis.url, OB_HTTP_PORT: '0', OB_SMTP_INBOUND_PORT: '0', OB_SMTP_SUBMISSION_PORT: '0' });
        await assert.rejects(startOutbox(config, pino({ level: 'silent' })));
        const connz = await (await fetch(`http://127.0.0.1:${monitor}/connz`)).json();
        assert.equal(connz.num_connections, 0, 'the NATS connection is closed');
        const clients = await probe.client('LIST');
        assert.doesNotMatch(clients, /name=outbox-/, 'the Redis connection is closed');
    }
    finally {
        probe.disconnect();
        nats.kill('SIGKILL');
        await once(nats, 'exit');
        await redis.dispose();
    }
});
//# sourceMappingURL=start_failure.test.js.map