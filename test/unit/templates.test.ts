import { test } from 'node:test'
import assert from 'node:assert/strict'
import { missingVariables, renderTemplate, templateVariables } from '../../protocol/mod.ts'

test('placeholders are filled in subject, html and text', () => {
  const out = renderTemplate({ subject: 'Hi {{name}}', html: '<p>Hello {{ name }}, code {{code}}</p>', text: 'Hello {{name}}' },
    { name: 'Ada', code: 42 })
  assert.deepEqual(out, { subject: 'Hi Ada', html: '<p>Hello Ada, code 42</p>', text: 'Hello Ada' })
})

test('values are HTML-escaped in html only', () => {
  const v = { who: '<b>"Tom" & \'Jerry\'</b>' }
  const out = renderTemplate({ subject: 'To {{who}}', html: '<p>{{who}}</p>', text: '{{who}}' }, v)
  assert.equal(out.html, '<p>&lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;</p>')
  assert.equal(out.text, v.who)
  assert.equal(out.subject, `To ${v.who}`)
})

test('unknown, null and object values render empty', () => {
  const out = renderTemplate({ subject: '[{{missing}}]', html: '[{{nothing}}][{{obj}}]' }, { nothing: null, obj: { a: 1 } })
  assert.equal(out.subject, '[]')
  assert.equal(out.html, '[][]')
  assert.equal('text' in out, false)
})

test('dotted names look up a key as written first, then a nested path', () => {
  const out = renderTemplate({ subject: '{{user.name}} {{a.b}}', html: '{{user.missing}}' }, { user: { name: 'Lin' }, 'a.b': 'flat' })
  assert.equal(out.subject, 'Lin flat')
  assert.equal(out.html, '')
})

test('a variable cannot add a line break to the subject', () => {
  assert.equal(renderTemplate({ subject: 'A {{x}} B', html: '' }, { x: 'one\r\nBcc: evil@example.com' }).subject,
    'A one Bcc: evil@example.com B')
})

test('inherited properties are not variables', () => {
  assert.equal(renderTemplate({ subject: '{{constructor}}{{toString}}', html: '' }, {}).subject, '')
})

test('text that only looks like a placeholder stays as it is', () => {
  const out = renderTemplate({ subject: '{{ }} {x} {{a b}}', html: '{{{x}}}' }, { x: 'X' })
  assert.equal(out.subject, '{{ }} {x} {{a b}}')
  assert.equal(out.html, '{X}')
})

test('templateVariables lists each name once', () => {
  assert.deepEqual(templateVariables({ subject: '{{a}} {{b}}', html: '{{ a }} {{c.d}}', text: '{{e}}' }), ['a', 'b', 'c.d', 'e'])
})

test('missingVariables names each placeholder without a printable value once, in order', () => {
  const content = { subject: 'Hi {{name}}', html: '<p>{{ order }} {{name}} {{user.first}}</p>', text: '{{zero}} {{no}} {{blank}}' }
  assert.deepEqual(missingVariables(content, { name: 'Ann', order: 1, 'user.first': 'A', zero: 0, no: false, blank: '' }), [])
  assert.deepEqual(missingVariables(content, { name: 'Ann' }), ['order', 'user.first', 'zero', 'no', 'blank'])
  const odd = { name: null, order: {}, user: { first: 'A' } } as never
  assert.deepEqual(missingVariables(content, odd), ['name', 'order', 'zero', 'no', 'blank'])
  assert.deepEqual(missingVariables({ subject: 'plain' }), [])
  assert.deepEqual(missingVariables({ subject: '{{toString}}' }, {}), ['toString'], 'inherited properties are not values')
})
