import { parentPort, workerData } from 'node:worker_threads';
import { createTransport } from 'nodemailer';
/**
 * The SMTP submission benchmark's client, on its own thread (a real application is another process): `count`
 * messages over a pool of 8 connections, STARTTLS and AUTH PLAIN as applications configure it. Reports the wall-clock
 * time (ms since the epoch) it started sending, once every message was answered 250.
 */
const { port, count, from, to, password } = workerData;
const BODY = 'Hello,\r\n\r\nThis is a benchmark message with a little text in it, as a password reset would have.\r\n';
const t = createTransport({
    host: '127.0.0.1', port, pool: true, maxConnections: 8, maxMessages: Infinity, requireTLS: true,
    auth: { user: 'apikey', pass: password }, tls: { rejectUnauthorized: false }
});
const startedAt = performance.timeOrigin + performance.now();
await Promise.all(Array.from({ length: count }, (_, i) => t.sendMail({
    from: `Bench App <${from}>`, to, subject: `Benchmark message ${i}`, text: BODY, html: `<p>${BODY}</p>`,
    headers: { 'X-Outbox-Metadata': JSON.stringify({ n: String(i) }) }
})));
t.close();
parentPort.postMessage({ startedAt });
//# sourceMappingURL=submission_sender.js.map