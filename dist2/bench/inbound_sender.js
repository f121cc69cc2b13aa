import { parentPort, workerData } from 'node:worker_threads';
import { createTransport } from 'nodemailer';
/**
 * The benchmark's SMTP client, on its own thread so that it does not share an event loop with the server it
 * measures (a real sender is another machine). Sends `count` messages over a pool of 8 connections and reports
 * the wall-clock time (ms since the epoch) it started sending, once everything was accepted.
 */
const { port, count, to } = workerData;
const BODY = 'Hello,\r\n\r\nThis is a benchmark message with a little text in it, as a reply to a support ticket would have.\r\n';
const t = createTransport({ host: '127.0.0.1', port, pool: true, maxConnections: 8, maxMessages: Infinity, ignoreTLS: true });
const startedAt = performance.timeOrigin + performance.now();
await Promise.all(Array.from({ length: count }, (_, i) => t.sendMail({
    from: 'Bench Sender <bench@sender.test>', to, subject: `Benchmark message ${i}`, text: BODY, html: `<p>${BODY}</p>`
})));
t.close();
parentPort.postMessage({ startedAt });
//# sourceMappingURL=inbound_sender.js.map