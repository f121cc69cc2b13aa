import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Redis } from 'ioredis';
import { startEmbeddedServices, answers } from '../../../cli/embedded_services.js';
import { freePort } from '../../helpers/ports.js';
test('unset URLs and silent ports: nats-server (JetStream) and redis-server start under the data dir and stop again', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'outbox-embedded-'));
    const [natsPort, redisPort] = [await freePort(), await freePort()];
    const said = [];
    const services = await startEmbeddedServices({
        natsConfigured: false,
        redisConfigured: false,
        dataDir,
        env: { PATH: process.env.PATH },
        log: pino({ level: 'silent' }),
        say: (line) => said.push(line),
        natsPort,
        redisPort
    });
    try {
        assert.deepEqual(services.started.map((s) => s.name), ['nats-server', 'redis-server']);
        const nc = await connect({ servers: `nats://127.0.0.1:${natsPort}` });
        const jsm = await jetstreamManager(nc);
        const info = await jsm.getAccountInfo();
        assert.ok(info.limits !== undefined, 'JetStream is enabled');
        await nc.close();
        const redis = new Redis(redisPort, '127.0.0.1');
        assert.equal(await redis.config('GET', 'appendonly').then((r) => r[1]), 'yes');
        redis.disconnect();
        assert.match(readFileSync(join(dataDir, 'nats.conf'), 'utf8'), /store_dir: ".*nats"/);
        assert.ok(existsSync(join(dataDir, 'redis')));
        assert.deepEqual(said, [], 'nothing to install here');
    }
    finally {
        await services.stop();
    }
    assert.equal(await answers(natsPort), false);
    assert.equal(await answers(redisPort), false);
    rmSync(dataDir, { recursive: true, force: true });
});
test('configured URLs: nothing is started even when the ports are silent', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'outbox-embedded-'));
    const services = await startEmbeddedServices({
        natsConfigured: true,
        redisConfigured: true,
        dataDir,
        env: { PATH: process.env.PATH },
        log: pino({ level: 'silent' }),
        say: () => { },
        natsPort: await freePort(),
        redisPort: await freePort()
    });
    assert.equal(services.started.length, 0);
    await services.stop();
    rmSync(dataDir, { recursive: true, force: true });
});
//# sourceMappingURL=embedded_services.test.js.map