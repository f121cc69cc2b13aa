import { createServer } from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';
/**
 * The receiving side of the webhook bench, in its own thread: two healthy HTTPS servers that answer 200 at
 * once, a dead one that accepts requests and never answers, and a slow one that answers after `slowMs`.
 * It reports how many requests a path received.
 */
const { key, cert, slowMs } = workerData;
const counts = new Map();
const handler = (req, res) => {
    req.resume();
    req.on('end', () => {
        counts.set(req.url ?? '', (counts.get(req.url ?? '') ?? 0) + 1);
        res.writeHead(200, { 'content-length': '2' });
        res.end('ok');
    });
};
const healthy = createServer({ key, cert }, handler);
const other = createServer({ key, cert }, handler);
healthy.keepAliveTimeout = 60_000;
other.keepAliveTimeout = 60_000;
const dead = createServer({ key, cert }, (req) => { req.resume(); });
const slow = createServer({ key, cert }, (req, res) => {
    req.resume();
    const timer = setTimeout(() => { res.writeHead(200, { 'content-length': '2' }); res.end('ok'); }, slowMs);
    res.on('close', () => clearTimeout(timer));
});
slow.keepAliveTimeout = 60_000;
const servers = [healthy, other, dead, slow];
let listening = 0;
for (const s of servers) {
    s.listen(0, '127.0.0.1', () => {
        if (++listening < servers.length)
            return;
        const port = (x) => x.address().port;
        parentPort.postMessage({ healthy: port(healthy), other: port(other), dead: port(dead), slow: port(slow) });
    });
}
parentPort.on('message', (m) => {
    if (m.startsWith('count ')) {
        parentPort.postMessage({ total: counts.get(m.slice(6)) ?? 0 });
    }
    else if (m === 'reset') {
        counts.clear();
    }
    else if (m === 'close') {
        for (const s of servers) {
            s.closeAllConnections();
            s.close();
        }
        parentPort.close();
    }
});
//# sourceMappingURL=webhook_sink.js.map