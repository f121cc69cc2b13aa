import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'

let ob: TestOutbox
let org: TestOrg
let sendKey: string

before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  sendKey = await ob.key(org, ['send'])
})
after(async () => { await ob.close() })

test('clean content passes with a low score', async () => {
  const r = await ob.request('POST', '/v1/messages/analyze', {
    key: sendKey,
    body: {
      subject: 'Your receipt for order 1042',
      from: `Shop <billing@${org.domain}>`,
      html: '<html><body><p>Thanks for your order. Your receipt is below.</p><p>Total: 42.00 EUR</p>' +
        `<p><a href="https://${org.domain}/orders/1042">View your order</a></p>` +
        `<p><a href="https://${org.domain}/unsubscribe">Unsubscribe</a></p></body></html>`,
      text: 'Thanks for your order. Total: 42.00 EUR'
    }
  })
  assert.equal(r.status, 200)
  assert.equal(r.body.verdict, 'pass')
  assert.ok(r.body.score < 3)
  assert.deepEqual(r.body.checks, [])
})

test('spammy content fails and names the rules that fired', async () => {
  const r = await ob.request('POST', '/v1/messages/analyze', {
    key: sendKey,
    body: {
      subject: 'ACT NOW!!! YOU ARE A WINNER',
      from: 'paypal.com security <alerts@cheap-offers.test>',
      html: '<div><p>Claim your prize, 100% free, risk-free!!! $$$</p>' +
        '<a href="http://198.51.100.7/login">https://www.paypal.com/signin</a> <a href="https://bit.ly/x">here</a>' +
        '<span style="display:none">hidden keywords hidden keywords hidden</span><script>alert(1)</script><form action="/x"></form>'
    }
  })
  assert.equal(r.status, 200)
  assert.equal(r.body.verdict, 'fail')
  assert.ok(r.body.score >= 6 && r.body.score <= 10)
  const ids = r.body.checks.map((c: { id: string }) => c.id)
  for (const id of ['subject_all_caps', 'spam_phrases', 'excessive_punctuation', 'link_text_mismatch', 'url_shortener', 'ip_address_url',
    'hidden_text', 'active_content', 'missing_text_part', 'from_name_mismatch', 'missing_unsubscribe', 'html_unbalanced']) {
    assert.ok(ids.includes(id), `${id} fired`)
  }
  for (const c of r.body.checks) assert.ok(['info', 'warning', 'error'].includes(c.severity) && c.message.length > 0)
})

test('analyze needs the send permission and a valid body', async () => {
  const readOnly = await ob.key(org, ['read'])
  const denied = await ob.request('POST', '/v1/messages/analyze', { key: readOnly, body: { subject: 's', html: '' } })
  assert.equal(denied.status, 403)
  const bad = await ob.request('POST', '/v1/messages/analyze', { key: sendKey, body: { html: 5 } })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.error.code, 'validation_error')
  const fields = bad.body.error.errors.map((e: { field: string }) => e.field)
  assert.ok(fields.includes('subject') && fields.includes('html'))
})
