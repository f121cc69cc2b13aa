import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { ERRORS, ApiError, type ErrorCode } from '../../protocol/errors.ts'

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8')
/** `| \`code\` | status | meaning |` rows of the Codes table. */
const rows = new Map([...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (.+) \|$/gm)].map((m) => [m[1]!, { status: Number(m[2]), meaning: m[3]! }]))

test('every code of the error table is documented in docs/errors.md with its status', () => {
  for (const [code, e] of Object.entries(ERRORS)) {
    const row = rows.get(code)
    assert.ok(row !== undefined, `docs/errors.md lacks ${code}`)
    assert.equal(row.status, e.status, `${code} status`)
    assert.ok(row.meaning.length > 10, `${code} needs a meaning`)
  }
  assert.deepEqual([...rows.keys()].sort(), Object.keys(ERRORS).sort(), 'docs/errors.md documents a code the table lacks')
})

test('each row key is the code of the ApiError it builds, with the row status', () => {
  for (const code of Object.keys(ERRORS) as ErrorCode[]) {
    const err = new ApiError(code)
    assert.equal(err.code, code)
    assert.equal(err.status, ERRORS[code].status)
    assert.equal(err.toJSON('req_x').error.code, code)
  }
})
