import { test } from 'node:test'
import assert from 'node:assert/strict'
import { sandboxOutcome } from '../../../engine/sandbox.ts'
import { renderTemplate } from '../../../protocol/templates.ts'

const AT = '2026-01-01T00:00:00.000Z'
const LATER = '2026-01-01T00:00:00.001Z' // engagement is stamped just after the delivery
const HTML = '<a href="mailto:x@y.z">m</a><a href="https://example.org/a">a</a>'

test('sandbox outcome follows the local part, ignoring +tags and case', () => {
  assert.deepEqual(sandboxOutcome('Bounce+7@x.org', HTML, 'https://p', AT).outcome, { kind: 'bounced', code: '550', message: '550 5.1.1 Sandbox: simulated hard bounce' })
  assert.equal(sandboxOutcome('softbounce@x.org', HTML, 'https://p', AT).outcome.kind, 'deferred')
  const c = sandboxOutcome('complaint@x.org', HTML, 'https://p', AT)
  assert.equal(c.outcome.kind, 'delivered')
  assert.deepEqual(c.followUp, { type: 'complained', at: LATER, fields: { complained_at: LATER, feedback_type: 'abuse' } })
  assert.deepEqual(sandboxOutcome('open@x.org', HTML, 'https://p', AT).followUp,
    { type: 'opened', at: LATER, fields: { opened_at: LATER, user_agent: 'Outbox-Sandbox', ip_address: '127.0.0.1' } })
  const clickedUrl = (html: string | undefined): string | undefined => {
    const f = sandboxOutcome('click@x.org', html, 'https://p', AT).followUp
    return f?.type === 'clicked' ? f.fields.url : undefined
  }
  assert.equal(clickedUrl(HTML), 'https://example.org/a')
  assert.equal(clickedUrl(undefined), 'https://p/')
  const plain = sandboxOutcome('bouncer@x.org', HTML, 'https://p', AT)
  assert.equal(plain.outcome.kind, 'delivered')
  assert.equal(plain.followUp, undefined)
})

test('templates: {{var}} filled, HTML-escaped only in html, unknown variables empty, subject kept on one line', () => {
  const out = renderTemplate({ subject: 'Hi {{name}}{{nl}}', html: '<b>{{ name }}</b> {{missing}}', text: '{{name}} #{{n}}' },
    { name: '<A&B>', n: 3, nl: '\r\nBcc: x' })
  assert.equal(out.subject, 'Hi <A&B> Bcc: x')
  assert.equal(out.html, '<b>&lt;A&amp;B&gt;</b> ')
  assert.equal(out.text, '<A&B> #3')
  assert.equal(renderTemplate({ subject: 's', html: 'h' }).text, undefined)
})
