import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shareOf } from '../../../engine/leases/lease_table.js';
test('shares add up to exactly the number of shards, never leaving a process idle', () => {
    for (let units = 1; units <= 24; units++) {
        for (let n = 1; n <= 8; n++) {
            const ids = Array.from({ length: n }, (_v, i) => `e${i}`);
            const shares = ids.map((id) => shareOf(units, ids, id));
            assert.equal(shares.reduce((a, b) => a + b, 0), units, `${units} units over ${n}`);
            assert.ok(Math.max(...shares) - Math.min(...shares) <= 1, `${units} units over ${n}: ${shares.join(',')}`);
        }
    }
    assert.deepEqual(['a', 'b', 'c', 'd', 'e'].map((id) => shareOf(12, ['e', 'd', 'c', 'b', 'a'], id)), [3, 3, 2, 2, 2]);
});
test('a process missing from the member list counts itself, last in order', () => {
    assert.equal(shareOf(4, [], 'x'), 4);
    assert.equal(shareOf(4, ['a'], 'z'), 2);
    assert.equal(shareOf(5, ['a', 'b'], 'c'), 1);
});
//# sourceMappingURL=lease_share.test.js.map