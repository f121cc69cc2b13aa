import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statsOver } from '../../stores/read_model/message_stats.js';
import { hourBucket } from '../../stores/read_model/message_store_keys.js';
test('hour buckets are UTC yyyymmddhh', () => {
    assert.equal(hourBucket(Date.UTC(2026, 0, 2, 3, 59, 59)), '2026010203');
    assert.equal(hourBucket(Date.UTC(2026, 11, 31, 23, 0, 0)), '2026123123');
});
test('every hour overlapping [from, to) is read once; to is exclusive', async () => {
    const read = [];
    const from = Date.UTC(2026, 0, 1, 10, 30);
    await statsOver(async (h) => { read.push(h); return {}; }, from, Date.UTC(2026, 0, 1, 13, 0));
    assert.deepEqual(read, ['2026010110', '2026010111', '2026010112']);
});
test('counts sum the known counters; series per day start at UTC midnight and sum to the counts', async () => {
    const data = {
        2026010123: { sent: '2', delivered: '1', failed: '9' },
        2026010200: { opened: '3', delivered: '1' }
    };
    const r = await statsOver(async (h) => data[h] ?? {}, Date.UTC(2026, 0, 1, 22), Date.UTC(2026, 0, 2, 2), 'day');
    assert.deepEqual(r.counts, { sent: 2, delivered: 2, bounced: 0, deferred: 0, opened: 3, clicked: 0, unsubscribed: 0, complained: 0 });
    assert.deepEqual(r.series.map((s) => [s.start, s.counts.delivered]), [['2026-01-01T00:00:00.000Z', 1], ['2026-01-02T00:00:00.000Z', 1]]);
    const hourly = await statsOver(async (h) => data[h] ?? {}, Date.UTC(2026, 0, 1, 22), Date.UTC(2026, 0, 2, 2), 'hour');
    assert.equal(hourly.series.length, 4);
    assert.equal(hourly.series[1].start, new Date(Date.UTC(2026, 0, 1, 23)).toISOString());
});
//# sourceMappingURL=message_stats.test.js.map