import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERRORS, INTERNAL_ERRORS, ApiError } from '../../protocol/errors.js';
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const doc = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
/** `| \`code\` | status | meaning |` rows of the Codes table. */
const rows = new Map([...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (.+) \|$/gm)].map((m) => [m[1], { status: Number(m[2]), meaning: m[3] }]));
/** `| \`code\` | meaning |` rows of the "Codes in the logs" table. */
const logSection = doc.slice(doc.indexOf('## Codes in the logs'));
const logRows = new Map([...logSection.matchAll(/^\| `([a-z_]+)` \| ([^|]+) \|$/gm)].map((m) => [m[1], m[2]]));
const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
test('every code of the error table is documented in docs/errors.md with its status', () => {
    for (const [code, e] of Object.entries(ERRORS)) {
        const row = rows.get(code);
        assert.ok(row !== undefined, `docs/errors.md lacks ${code}`);
        assert.equal(row.status, e.status, `${code} status`);
        assert.ok(row.meaning.length > 10, `${code} needs a meaning`);
    }
    assert.deepEqual([...rows.keys()].sort(), Object.keys(ERRORS).sort(), 'docs/errors.md documents a code the table lacks');
});
test('each row key is the code of the ApiError it builds, with the row status', () => {
    for (const code of Object.keys(ERRORS)) {
        const err = new ApiError(code);
        assert.equal(err.code, code);
        assert.equal(err.status, ERRORS[code].status);
        assert.equal(err.toJSON('req_x').error.code, code);
    }
});
test('every internal error code is documented under "Codes in the logs", and no code is both internal and an API code', () => {
    for (const code of Object.keys(INTERNAL_ERRORS)) {
        const meaning = logRows.get(code);
        assert.ok(meaning !== undefined, `docs/errors.md lacks ${code} under "Codes in the logs"`);
        assert.ok(meaning.length > 10, `${code} needs a meaning`);
        assert.ok(!(code in ERRORS), `${code} is an API code too`);
    }
    const documented = [...logRows.keys()].sort();
    assert.deepEqual(documented, Object.keys(INTERNAL_ERRORS).sort(), 'docs/errors.md documents an internal code the table lacks');
});
test('every code is spelled in snake_case', () => {
    for (const code of [...Object.keys(ERRORS), ...Object.keys(INTERNAL_ERRORS)])
        assert.match(code, SNAKE_CASE);
});
/** The TypeScript sources of the services, stores, protocol, config and CLI (not the API client, which only reads codes). */
function sources(dir) {
    return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
        const path = join(dir, e.name);
        return e.isDirectory() ? sources(path) : e.name.endsWith('.ts') ? [path] : [];
    });
}
test('every error class and log line of the code base uses a code of the table, and every internal code is used', () => {
    const used = new Map();
    for (const file of ['cli', 'config', 'engine', 'gateway', 'inbound', 'protocol', 'stores', 'webhooks'].flatMap(sources)) {
        const src = readFileSync(join(ROOT, file), 'utf8');
        // `readonly code = 'x'`, `readonly code: 'x' | 'y'` (or an Extract of the table), and `log.*({ …, code: 'x' … })`
        for (const m of src.matchAll(/readonly code = '([^']+)'/g))
            used.set(m[1], file);
        for (const m of src.matchAll(/readonly code: [^\n]*/g))
            for (const c of m[0].matchAll(/'([^']+)'/g))
                used.set(c[1], file);
        for (const m of src.matchAll(/log\.\w+\(\{[^}]*\bcode: '([^']+)'/g))
            used.set(m[1], file);
    }
    for (const [code, file] of used)
        assert.ok(code in INTERNAL_ERRORS || code in ERRORS, `${file}: code ${code} is not in the table`);
    for (const code of Object.keys(INTERNAL_ERRORS))
        assert.ok(used.has(code), `no error class or log line uses ${code}`);
});
//# sourceMappingURL=errors_table.test.js.map