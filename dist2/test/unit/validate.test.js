import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { compileValidator, fieldOf } from '../../gateway/http/validate.js';
test('JSON pointers become the field names users see', () => {
    assert.equal(fieldOf(''), 'body');
    assert.equal(fieldOf('/to'), 'to');
    assert.equal(fieldOf('/to/3'), 'to[3]');
    assert.equal(fieldOf('/messages/2/attachments/0/filename'), 'messages[2].attachments[0].filename');
    assert.equal(fieldOf('/metadata', 'a/b'), 'metadata.a/b');
});
test('every bad field is listed once, missing and unknown fields by name', () => {
    const v = compileValidator(Type.Object({
        from: Type.String(),
        to: Type.String({ minLength: 3 }),
        n: Type.Optional(Type.Integer())
    }, { additionalProperties: false }));
    assert.equal(v.check({ from: 'a', to: 'abc' }), null);
    const errors = v.check({ to: 'x', n: 'seven', extra: 1 });
    assert.ok(errors !== null);
    const byField = Object.fromEntries(errors.map((e) => [e.field, e.message]));
    assert.deepEqual(Object.keys(byField).sort(), ['extra', 'from', 'n', 'to']);
    assert.equal(byField.from, 'is required');
    assert.equal(byField.extra, 'is not a known field');
});
//# sourceMappingURL=validate.test.js.map