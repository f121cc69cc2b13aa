import { test } from 'node:test'
import assert from 'node:assert/strict'
import { BOUNCE_CATEGORIES, bounceCategory, enhancedStatus, suppresses, type BounceCategory } from '../../../protocol/mod.ts'

test('bounce categories: the enhanced status code decides, whatever the text says', () => {
  const table: Array<[string, string, BounceCategory]> = [
    ['550', '550 5.1.1 <x@y.z>: Recipient address rejected: User unknown', 'mailbox'],
    ['550', '550-5.1.1 The email account that you tried to reach does not exist.', 'mailbox'],
    ['550', '550 5.1.6 recipient moved', 'mailbox'],
    ['550', '550 5.2.1 mailbox disabled, not accepting messages', 'mailbox'],
    ['550', '5.1.2 nope.invalid has no MX or A record', 'domain'],
    ['556', '5.1.10 recipient domain publishes a null MX', 'domain'],
    ['550', '550 5.4.4 unable to route', 'domain'],
    ['550', '550 5.7.1 Service unavailable; client host blocked using Spamhaus', 'policy'],
    ['550', '550 5.7.26 unauthenticated email from example.com is not accepted due to DMARC policy', 'policy'],
    ['554', '554 5.7.1 <x@y.z>: Recipient address rejected: user unknown', 'policy'],
    ['554', '554 5.6.0 message content rejected', 'content'],
    ['552', '552 5.3.4 message size exceeds fixed limit', 'size'],
    ['552', '552 5.2.3 message length exceeds administrative limit', 'size'],
    ['552', '552 5.2.2 mailbox full', 'mailbox_full'],
    ['452', '452 4.2.2 over quota', 'mailbox_full'],
    ['553', '553 5.1.8 sender address domain does not exist', 'other'],
    ['550', '550 5.1.7 bad sender mailbox syntax', 'other'],
    ['554', '554 5.3.0 other mail system problem', 'other'],
    ['421', '421 4.4.2 connection dropped', 'other']
  ]
  for (const [code, text, category] of table) assert.equal(bounceCategory({ code, text }), category, text)
  assert.equal(bounceCategory({ code: '', enhanced: '5.7.1', text: 'smtp; 550 user unknown' }), 'policy',
    'a DSN Status field counts as the enhanced status')
  assert.equal(bounceCategory({ code: '550', enhanced: '5.1.1', text: '' }), 'mailbox')
})

test('bounce categories: without an enhanced status, or with a generic one, the text and the reply code decide', () => {
  const table: Array<[string, string, BounceCategory]> = [
    ['550', '550 No such user here', 'mailbox'],
    ['550', '550 5.0.0 <x@y.z>... User unknown', 'mailbox'],
    ['550', '550 Requested action not taken: mailbox not found', 'mailbox'],
    ['554', '554 Message rejected: spam detected', 'policy'],
    ['550', '550 Your IP is listed at zen.spamhaus.org', 'policy'],
    ['554', '554 Virus found in message', 'content'],
    ['552', '552 Message too large', 'size'],
    ['552', '552 Requested mail action aborted: exceeded storage allocation', 'size'],
    ['552', '552 Mailbox full', 'mailbox_full'],
    ['550', '550 Host not found', 'domain'],
    ['550', '550 Requested action not taken: mailbox unavailable', 'other'],
    ['554', '554 Transaction failed', 'other'],
    ['550', '', 'other']
  ]
  for (const [code, text, category] of table) assert.equal(bounceCategory({ code, text }), category, text)
})

test('an enhanced status is read only at the start of a reply, never out of an address in its text', () => {
  assert.equal(enhancedStatus('550 5.1.1 user unknown'), '5.1.1')
  assert.equal(enhancedStatus('550-5.7.1 blocked'), '5.7.1')
  assert.equal(enhancedStatus('5.1.2 no mail host'), '5.1.2')
  assert.equal(enhancedStatus('550 rejected from 10.5.1.1'), '')
  assert.equal(enhancedStatus('550 5.1.1.2 odd'), '')
})

test('only mailbox and domain bounces suppress', () => {
  assert.deepEqual(BOUNCE_CATEGORIES.filter(suppresses), ['mailbox', 'domain'])
})
