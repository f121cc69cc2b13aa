import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { MAX_JSON_DEPTH } from '../../../gateway/http/json_depth.ts'

/**
 * A body nesting arrays or objects past the documented depth is refused with `400 validation_error` before it is
 * parsed, whichever route it is sent to and wherever the nesting sits; brackets inside strings do not count.
 */
let ob: TestOutbox
let org: TestOrg
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
})
after(async () => { await ob.close() })

const nested = (open: string, close: string, depth: number, inner = '1'): string => open.repeat(depth) + inner + close.repeat(depth)

function assertNestingRefused (res: { status: number, body: any, text: string }, what: string): void {
  assert.equal(res.status, 400, `${what}: ${res.status} ${res.text.slice(0, 300)}`)
  assert.equal(res.body.error.code, 'validation_error', what)
  assert.deepEqual(res.body.error.errors,
    [{ field: 'body', message: `must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep` }], what)
}

test('8 MB of nested arrays, and nesting inside a field, are 400 naming the depth limit', async () => {
  const depth = 4_000_000
  const huge = nested('[', ']', depth)
  for (const [path, raw] of [
    ['/v1/messages/send', huge],
    ['/v1/suppressions', huge],
    ['/v1/messages/send', `{"from":"me@${org.domain}","to":"a@b.example","metadata":${nested('{"a":', '}', 100_000)}}`],
    ['/v1/webhooks', `{"url":"https://h.example/","events":${nested('[', ']', MAX_JSON_DEPTH + 1, '"x"')}}`]
  ] as const) {
    const res = await ob.request('POST', path, { key: org.adminKey, rawBody: raw, headers: { 'content-type': 'application/json' } })
    assertNestingRefused(res, `${path} ${raw.slice(0, 40)}…`)
  }
})

test('nesting up to the limit is parsed and validated as usual; brackets inside strings do not count', async () => {
  const atLimit = `{"from":"me@${org.domain}","to":"a@b.example","metadata":${nested('[', ']', MAX_JSON_DEPTH - 1)}}`
  const r1 = await ob.request('POST', '/v1/messages/send', {
    key: org.adminKey, rawBody: atLimit, headers: { 'content-type': 'application/json' }
  })
  assert.equal(r1.status, 400)
  assert.ok(r1.body.error.errors.some((e: { field: string }) => e.field === 'metadata'), r1.text)
  const bracketsInText = { from: `me@${org.domain}`, to: 'a@b.example', subject: 's', text: '['.repeat(10_000) + '\\"{'.repeat(1000) }
  const r2 = await ob.request('POST', '/v1/messages/send', { key: org.adminKey, body: bracketsInText })
  assert.equal(r2.status, 202, r2.text)
})
