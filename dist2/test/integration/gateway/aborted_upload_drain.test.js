import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { TestOutbox } from '../../helpers/outbox.js';
let ob;
after(async () => { await ob?.close(); });
async function until(what, condition) {
    for (let i = 0; i < 400; i++) {
        if (condition())
            return;
        await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`timed out waiting for ${what}`);
}
test('clients that abort mid-upload leave nothing in flight, so a drain does not wait for its deadline', { timeout: 90_000 }, async () => {
    // A long shutdown deadline, so a drain that waits for it cannot be mistaken for one that finished.
    ob = await TestOutbox.start({ env: { OB_ROLE: 'gateway', OB_SHUTDOWN_TIMEOUT_MS: '60000' } });
    const org = await ob.org('pro');
    const key = await ob.key(org, ['send']);
    const server = ob.proc.gateway.server;
    const declared = 1024 * 1024;
    const sockets = [];
    for (let i = 0; i < 5; i++) {
        const sock = connect({ host: '127.0.0.1', port: ob.proc.gateway.port });
        sock.on('error', () => { });
        await new Promise((resolve) => sock.once('connect', resolve));
        sock.write(['POST /v1/messages/send HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${key}`, 'Content-Type: application/json',
            `Content-Length: ${declared}`, '', ''].join('\r\n'));
        sock.write('{"html":"' + 'x'.repeat(64 * 1024));
        sockets.push(sock);
    }
    await until('the five uploads to be in flight', () => server.inFlight === 5);
    for (const sock of sockets)
        sock.destroy();
    await until('the aborted uploads to leave nothing in flight', () => server.inFlight === 0);
    let deadlineTimer;
    const outcome = await Promise.race([
        ob.proc.stop().then(() => 'stopped'),
        new Promise((resolve) => { deadlineTimer = setTimeout(() => resolve('still waiting at 30 s'), 30_000); })
    ]);
    clearTimeout(deadlineTimer);
    assert.equal(outcome, 'stopped', 'the drain finished long before its 60 s deadline');
});
//# sourceMappingURL=aborted_upload_drain.test.js.map