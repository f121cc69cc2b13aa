import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { DataBudget, readData } from '../../../gateway/submission/server.js';
const chunks = (n, size) => Readable.from(Array.from({ length: n }, () => Buffer.alloc(size, 0x61)));
test('DATA is held within the process-wide budget; past it the message is drained and answered busy, and the budget freed', async () => {
    const budget = new DataBudget(1000);
    const whole = await readData(chunks(4, 100), 10_000, budget);
    assert.ok(Buffer.isBuffer(whole) && whole.length === 400);
    assert.equal(budget.held, 0);
    budget.held = 800; // other sessions' messages still arriving
    assert.equal(await readData(chunks(4, 100), 10_000, budget), 'busy');
    assert.equal(budget.held, 800);
    budget.held = 0;
    assert.equal(await readData(chunks(4, 100), 300, budget), 'too_large');
    assert.equal(budget.held, 0);
});
//# sourceMappingURL=submission_data_budget.test.js.map