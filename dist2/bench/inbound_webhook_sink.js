import { createServer } from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';
import { verifySignature } from '../webhooks/sign.js';
/**
 * The receiving end of the inbound bench, on its own thread: an HTTPS server that checks each webhook's
 * signature and counts the distinct messages whose `inbound.received` arrived. The main thread arms it with the
 * webhook secret and the number of messages to wait for; it answers `{ received, bad }` once that many arrived.
 */
const { key, cert } = workerData;
let round;
const server = createServer({ key, cert }, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
        res.writeHead(200, { 'content-length': '2' });
        res.end('ok');
        const r = round;
        if (r === undefined)
            return;
        const body = Buffer.concat(chunks);
        const sig = req.headers['x-service-signature'];
        let event;
        try {
            event = JSON.parse(body.toString('utf8'));
        }
        catch {
            event = undefined;
        }
        const messageId = event?.data?.message_id;
        if (!verifySignature(body, typeof sig === 'string' ? sig : undefined, r.secret).ok || event?.type !== 'inbound.received' || messageId === undefined) {
            r.bad++;
            return;
        }
        r.seen.add(messageId);
        if (r.seen.size === r.count)
            parentPort.postMessage({ received: r.seen.size, bad: r.bad });
    });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => { parentPort.postMessage({ port: server.address().port }); });
parentPort.on('message', (m) => {
    if (m.close === true) {
        server.closeAllConnections();
        server.close();
        parentPort.close();
        return;
    }
    round = { secret: m.secret, count: m.expect, seen: new Set(), bad: 0 };
});
//# sourceMappingURL=inbound_webhook_sink.js.map