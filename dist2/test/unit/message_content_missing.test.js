import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../protocol/mod.js';
import { contentMissing } from '../../gateway/routes/message_content_v1.js';
const DAY_MS = 24 * 3600_000;
const now = Date.parse('2026-12-01T12:00:00Z');
const sentDaysAgo = (days) => newId('msg', now - days * DAY_MS);
function why(id, retentionDays) {
    const err = contentMissing(id, retentionDays, now);
    return { status: err.status, code: err.code, message: err.message, reason: err.details?.reason, days: err.details?.retention_days };
}
test('with recording off every message is 404 saying the installation records no content', () => {
    for (const age of [0, 3, 29]) {
        assert.deepEqual(why(sentDaysAgo(age), 0), {
            status: 404,
            code: 'not_found',
            message: 'Message content is not recorded on this installation (OB_MESSAGE_CONTENT_RETENTION_DAYS is 0).',
            reason: 'recording_off',
            days: 0
        });
    }
});
test('a message older than the retention has content no longer kept, saying for how long content is kept', () => {
    const id = sentDaysAgo(8);
    assert.deepEqual(why(id, 7), {
        status: 404,
        code: 'not_found',
        message: `The content of message ${id} is no longer kept: this installation keeps message content 7 days.`,
        reason: 'expired',
        days: 7
    });
    assert.match(why(sentDaysAgo(1), 1).message, /keeps message content 1 day\.$/);
    assert.equal(why(sentDaysAgo(7), 7).reason, 'expired', 'exactly the retention old');
});
test('a younger message is not recorded yet, whatever the retention', () => {
    const id = sentDaysAgo(0);
    assert.deepEqual(why(id, 30), {
        status: 404,
        code: 'not_found',
        message: `The content of message ${id} is not recorded yet; it is, once the engine takes the message up.`,
        reason: 'not_yet_recorded',
        days: 30
    });
    assert.equal(why(sentDaysAgo(6.9), 7).reason, 'not_yet_recorded');
    assert.equal(why(sentDaysAgo(29), 30).reason, 'not_yet_recorded');
});
//# sourceMappingURL=message_content_missing.test.js.map