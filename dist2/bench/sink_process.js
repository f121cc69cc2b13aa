import { SmtpSink } from '../test/helpers/smtp_sink.js';
const record = process.argv.includes('--record');
const sink = await SmtpSink.start({ keepRaw: false, record });
const arrivals = [];
const compact = () => {
    for (const m of sink.messages.splice(0))
        arrivals.push([m.messageId, m.receivedAt, Number(m.headers.get('x-bench-sent') ?? NaN)]);
};
// Between questions too: a phase of sends may run for minutes without one, and parsed headers are large.
if (record)
    setInterval(compact, 1000).unref();
process.send({ port: sink.port });
process.on('message', (m) => {
    if (m === 'count') {
        compact();
        process.send({ accepted: sink.accepted });
    }
    else if (m === 'arrivals') {
        compact();
        process.send({ arrivals });
    }
    else if (m === 'close') {
        void sink.close().then(() => process.exit(0));
    }
});
//# sourceMappingURL=sink_process.js.map