import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bookFailures, keepBooks, messageIdOf } from '../../bench/e2e_accounting.js';
const DOMAIN = 'e2e.bench.test';
const at = (id, receivedAt, sentAt = Number.NaN) => [messageIdOf(id, DOMAIN), receivedAt, sentAt];
test('every accepted message once at the sink with one webhook: clean books, latency from X-Bench-Sent', () => {
    const accepted = [{ id: 'msg_a', sentAt: 1000 }, { id: 'msg_b', sentAt: 1000 }];
    const b = keepBooks(accepted, [at('msg_a', 1010, 1000), at('msg_b', 1050, 1020)], new Map([['msg_a', 1], ['msg_b', 1]]), DOMAIN);
    assert.deepEqual([b.lost, b.duplicated, b.unacknowledged, b.webhookMissing, b.webhookDuplicated], [0, 0, 0, 0, 0]);
    assert.deepEqual(b.sendToSinkMs, { p50: 10, p99: 30, max: 30 });
    assert.equal(b.lastArrivalAt, 1050);
    assert.equal(b.timedByHeader, 2);
    assert.deepEqual(bookFailures(b), []);
});
test('lost, duplicated and unwebhooked mail fail the books; a repeated webhook and mail without a 202 are reported only', () => {
    const accepted = ['msg_a', 'msg_b', 'msg_c', 'msg_d'].map((id) => ({ id, sentAt: 1000 }));
    const arrivals = [
        at('msg_a', 1100), at('msg_a', 1200), at('msg_a', 1300), // two extra copies; first arrival counts for latency
        at('msg_c', 1400),
        at('msg_d', 1500),
        at('msg_x', 1600), // accepted by the server, but its 202 never reached the sender
        ['<plain-1@plain.e2e.bench.test>', 1700, Number.NaN] // the reference pool's mail: not ours
    ];
    const b = keepBooks(accepted, arrivals, new Map([['msg_a', 1], ['msg_d', 2]]), DOMAIN);
    assert.equal(b.lost, 1, 'msg_b never arrived');
    assert.equal(b.duplicated, 1);
    assert.equal(b.extraCopies, 2);
    assert.equal(b.unacknowledged, 1);
    assert.equal(b.webhookMissing, 1, 'msg_c arrived without its webhook');
    assert.equal(b.webhookDuplicated, 1);
    assert.equal(b.sendToSinkMs.max, 500, 'falls back to the sender\'s send time and takes the first arrival');
    assert.equal(b.timedByHeader, 0);
    assert.equal(b.lastArrivalAt, 1500);
    const failures = bookFailures(b);
    assert.equal(failures.length, 3);
    assert.match(failures.join('\n'), /1 of 4 accepted message\(s\) never reached/);
    assert.match(failures.join('\n'), /2 extra copies/);
});
//# sourceMappingURL=bench_e2e_books.test.js.map