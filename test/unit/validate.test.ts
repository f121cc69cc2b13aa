import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Type } from 'typebox'
import { compileValidator, fieldOf } from '../../gateway/http/validate.ts'
import { compileQuery } from '../../gateway/http/query.ts'
import { allowedMethods } from '../../gateway/http/allow.ts'
import { ROUTES } from '../../gateway/routes/mod.ts'
import { ApiError, newId } from '../../protocol/mod.ts'

test('JSON pointers become the field names users see', () => {
  assert.equal(fieldOf(''), 'body')
  assert.equal(fieldOf('/to'), 'to')
  assert.equal(fieldOf('/to/3'), 'to[3]')
  assert.equal(fieldOf('/messages/2/attachments/0/filename'), 'messages[2].attachments[0].filename')
  assert.equal(fieldOf('/metadata', 'a/b'), 'metadata.a/b')
})

test('every bad field is listed once, missing and unknown fields by name', () => {
  const v = compileValidator(Type.Object({
    from: Type.String(),
    to: Type.String({ minLength: 3 }),
    n: Type.Optional(Type.Integer())
  }, { additionalProperties: false }))
  assert.equal(v.check({ from: 'a', to: 'abc' }), null)
  const errors = v.check({ to: 'x', n: 'seven', extra: 1 })
  assert.ok(errors !== null)
  const byField = Object.fromEntries(errors.map((e) => [e.field, e.message]))
  assert.deepEqual(Object.keys(byField).sort(), ['extra', 'from', 'n', 'to'])
  assert.equal(byField.from, 'is required')
  assert.equal(byField.extra, 'is not a known field')
})

function refusal (fn: () => void): ApiError {
  try { fn() } catch (err) { if (err instanceof ApiError) return err; throw err }
  assert.fail('not refused')
}

test('a value outside an enum names the allowed values, in the message and in `allowed`', () => {
  const v = compileValidator(Type.Object({
    a: Type.Optional(Type.Union([Type.Literal('x'), Type.Literal('y')])), b: Type.Optional(Type.Enum(['p', 'q']))
  }))
  assert.deepEqual(v.check({ a: 'z', b: 'z' }), [
    { field: 'a', message: 'must be one of "x", "y"', allowed: ['x', 'y'] },
    { field: 'b', message: 'must be one of "p", "q"', allowed: ['p', 'q'] }
  ])
})

test('an undeclared query parameter is refused by name; declared ones are converted and checked', () => {
  const query = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1 })), by: Type.Optional(Type.Enum(['a'])) })
  const check = compileQuery({ query })
  check(new URLSearchParams('limit=5&by=a'))
  const e = refusal(() => check(new URLSearchParams('limit=5&bogus=1')))
  assert.equal(e.code, 'validation_error')
  assert.equal(e.field, 'bogus')
  assert.deepEqual(e.details, { parameter: 'bogus', allowed: ['limit', 'by'] })
  assert.match(e.message, /Unknown query parameter "bogus": this endpoint takes limit, by\./)
  const bad = refusal(() => check(new URLSearchParams('by=b')))
  assert.deepEqual(bad.errors, [{ field: 'by', message: 'must be one of "a"', allowed: ['a'] }])
  assert.equal(refusal(() => compileQuery({})(new URLSearchParams('x=1'))).details?.parameter, 'x')
  compileQuery({})(new URLSearchParams(''))
  // a tracking link ignores what mail clients append
  compileQuery({ ignoreUnknownQuery: true })(new URLSearchParams('utm_source=news&fbclid=1'))
})

test('Allow lists exactly the methods of the routes whose path and parameter shapes match', () => {
  const allow = allowedMethods(ROUTES)
  assert.deepEqual(allow('/v1/messages/send'), ['POST'])
  assert.deepEqual(allow(`/v1/messages/${newId('msg')}`), ['GET', 'PATCH'])
  assert.deepEqual(allow('/v1/domains'), ['GET', 'POST'])
  assert.deepEqual(allow('/v1/messages/nothing-of-that-shape'), [])
  assert.deepEqual(allow('/nowhere'), [])
})
