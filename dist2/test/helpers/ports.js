import { createServer, connect } from 'node:net';
/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort() {
    return await new Promise((resolve, reject) => {
        const srv = createServer();
        srv.unref();
        srv.on('error', reject);
        srv.listen(0, '127.0.0.1', () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
    });
}
export async function waitForPort(port, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const ok = await new Promise((resolve) => {
            const s = connect(port, '127.0.0.1');
            s.once('connect', () => { s.destroy(); resolve(true); });
            s.once('error', () => resolve(false));
        });
        if (ok)
            return;
        if (Date.now() > deadline)
            throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
}
//# sourceMappingURL=ports.js.map