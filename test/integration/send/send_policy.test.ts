import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import { startGateway, outboundOf, outboundWithIds, sendKey, body, suppress, template, unverify } from './helpers.ts'

let ob: TestOutbox
let org: TestOrg
let key: string
before(async () => {
  ob = await startGateway()
  org = await ob.org('pro')
  key = await sendKey(ob, org)
})
after(async () => { await ob.close() })

test('a from address outside the key\'s domain is 403 forbidden and nothing is queued', async () => {
  const other = await ob.org('pro')
  for (const from of ['hello@elsewhere.test', `Name <hello@${other.domain}>`, `hello@sub.${org.domain}`]) {
    const r = await ob.request('POST', '/v1/messages/send', { key, body: body(org, { from }) })
    assert.equal(r.status, 403, `${from}: ${r.text}`)
    assert.equal(r.body.error.code, 'forbidden')
    assert.equal(r.body.error.field, 'from')
  }
  const upper = await ob.request('POST', '/v1/messages/send', { key, body: body(org, { from: `Hello@${org.domain.toUpperCase()}` }) })
  assert.equal(upper.status, 202, 'the domain comparison ignores case')
  const batch = await ob.request('POST', '/v1/messages/batch', {
    key, body: { messages: [body(org), body(org, { from: 'x@elsewhere.test' })] }
  })
  assert.equal(batch.status, 403)
  assert.equal(batch.body.error.field, 'messages[1].from')
  assert.equal((await outboundOf(ob, other)).length, 0)
})

test('a key without send permission is 403', async () => {
  const readKey = await ob.key(org, ['read'])
  const r = await ob.request('POST', '/v1/messages/send', { key: readKey, body: body(org) })
  assert.equal(r.status, 403)
  assert.equal(r.body.error.code, 'forbidden')
})

test('a domain that is not verified is 403 with a message saying so', async () => {
  const o = await ob.org('pro')
  const k = await sendKey(ob, o)
  await unverify(ob, o)
  const r = await ob.request('POST', '/v1/messages/send', { key: k, body: body(o) })
  assert.equal(r.status, 403, r.text)
  assert.equal(r.body.error.code, 'forbidden')
  assert.match(r.body.error.message, /not verified/)
  assert.equal((await outboundOf(ob, o)).length, 0)
})

test('an unknown template, or one of another organisation, is 422 unprocessable', async () => {
  const other = await ob.org('pro')
  const foreign = await template(ob, other)
  for (const id of ['tpl_00000000000000000000000000', foreign.id]) {
    const r = await ob.request('POST', '/v1/messages/send', {
      key, body: { from: `hello@${org.domain}`, to: 'u@example.net', template_id: id }
    })
    assert.equal(r.status, 422, r.text)
    assert.equal(r.body.error.code, 'unprocessable')
    assert.equal(r.body.error.field, 'template_id')
  }
})

test('a template send missing a variable is 422 naming it; allow_missing_variables renders it blank', async () => {
  const t = await template(ob, org) // uses {{name}} in subject, html and text
  const base = { from: `hello@${org.domain}`, to: 'u@example.net', template_id: t.id }
  for (const variables of [undefined, {}, { other: 'x' }]) {
    const r = await ob.request('POST', '/v1/messages/send', { key, body: { ...base, ...(variables !== undefined ? { variables } : {}) } })
    assert.equal(r.status, 422, r.text)
    assert.equal(r.body.error.code, 'unprocessable')
    assert.equal(r.body.error.field, 'variables')
    assert.deepEqual(r.body.error.details, { missing: ['name'] })
    assert.match(r.body.error.message, /name/)
  }
  const batch = await ob.request('POST', '/v1/messages/batch', {
    key, body: { messages: [{ ...base, variables: { name: 'Ann' } }, base] }
  })
  assert.equal(batch.status, 422, batch.text)
  assert.equal(batch.body.error.field, 'messages[1].variables')
  const empty = await ob.request('POST', '/v1/messages/send', { key, body: { ...base, variables: { name: '' } } })
  assert.equal(empty.status, 202, 'an empty string is a value the sender gave')
  const blank = await ob.request('POST', '/v1/messages/send', { key, body: { ...base, allow_missing_variables: true } })
  assert.equal(blank.status, 202, blank.text)
  const [queued] = await outboundWithIds(ob, [blank.body.id])
  assert.equal(queued!.msg.template_id, t.id)
  const plain = await ob.request('POST', '/v1/messages/send', { key, body: body(org, { allow_missing_variables: true }) })
  assert.equal(plain.status, 400, 'allow_missing_variables without template_id')
  assert.equal(plain.body.error.field, 'allow_missing_variables', plain.text)
})

test('suppressed recipients are dropped case-insensitively and listed; all suppressed is 422', async () => {
  await suppress(ob, org, 'Gone@Example.net')
  await suppress(ob, org, 'left@example.net')
  const some = await ob.request('POST', '/v1/messages/send', {
    key, body: body(org, { to: ['GONE@example.net', 'stay@example.net'], bcc: 'Left <left@EXAMPLE.net>' })
  })
  assert.equal(some.status, 202, some.text)
  assert.deepEqual(some.body.suppressed, ['gone@example.net', 'left@example.net'])
  const [s] = await outboundWithIds(ob, [some.body.id])
  assert.deepEqual(s!.msg.to, ['stay@example.net'])
  assert.deepEqual(s!.msg.bcc, [])
  assert.deepEqual(s!.msg.suppressed, ['gone@example.net', 'left@example.net'])

  const before = (await outboundOf(ob, org)).length
  const all = await ob.request('POST', '/v1/messages/send', { key, body: body(org, { to: 'gone@example.net', cc: 'left@example.net' }) })
  assert.equal(all.status, 422, all.text)
  assert.equal(all.body.error.code, 'recipient_suppressed')
  assert.equal((await outboundOf(ob, org)).length, before)

  const other = await ob.org('pro')
  const otherKey = await sendKey(ob, other)
  const elsewhere = await ob.request('POST', '/v1/messages/send', { key: otherKey, body: body(other, { to: 'gone@example.net' }) })
  assert.equal(elsewhere.status, 202, 'suppression lists are per organisation')
})

test('in a batch, an item whose recipients are all suppressed is reported and not queued', async () => {
  await suppress(ob, org, 'batchgone@example.net')
  const r = await ob.request('POST', '/v1/messages/batch', {
    key, body: { messages: [body(org, { to: 'batchgone@example.net' }), body(org, { to: 'fine@example.net' })] }
  })
  assert.equal(r.status, 202, r.text)
  assert.deepEqual(r.body.data[0], { id: null, status: 'suppressed', suppressed: ['batchgone@example.net'] })
  assert.equal(r.body.data[1].status, 'queued')
  const stored = await outboundWithIds(ob, [r.body.data[1].id])
  assert.equal(stored.length, 1)
  const allGone = await ob.request('POST', '/v1/messages/batch', { key, body: { messages: [body(org, { to: 'batchgone@example.net' })] } })
  assert.equal(allGone.status, 422)
  assert.equal(allGone.body.error.code, 'recipient_suppressed')
})
