import { test } from 'node:test'
import assert from 'node:assert/strict'
import { REPLY_RULES, replyAction, type ReplyAction } from '../../../protocol/egress/mod.ts'

const HOUR = 3_600_000
const SLOW: ReplyAction = { kind: 'slow' }

/** Each rule's replies as the providers send them (multi-line replies as nodemailer joins them, with '\n'). */
const EXAMPLES: Array<[rule: string, provider: string, reply: string, action: ReplyAction]> = [
  ['google-ip-rate-limited', 'google',
    '421-4.7.28 [203.0.113.42] Our system has detected an unusual rate of\n' +
    '421-4.7.28 unsolicited mail originating from your IP address. To protect our\n' +
    '421-4.7.28 users from spam, mail sent from your IP address has been temporarily\n' +
    '421 4.7.28 rate limited. Please visit\n' +
    '421 4.7.28  https://support.google.com/mail/?p=UnsolicitedRateLimitError to\n' +
    '421 4.7.28 review our Bulk Email Senders Guidelines. a1si2 - gsmtp', SLOW],
  ['google-ip-rate-limited', 'google', '421 4.7.28 [1.2.3.4] Our system has detected an unusual rate of unsolicited mail ' +
    'originating from your IP address. To protect our users from spam, mail sent from your IP address has been temporarily ' +
    'rate limited. - gsmtp', SLOW],
  ['google-unusual-rate', 'google', '421-4.7.0 [1.2.3.4      15] Our system has detected an unusual rate of\n' +
    '421-4.7.0 unsolicited mail originating from your IP address. To protect our\n' +
    '421 4.7.0 users from spam, mail sent from your IP address has been temporarily rate limited. - gsmtp', SLOW],
  ['google-ip-reputation', 'google', '421-4.7.0 [1.2.3.4] Our system has detected that this message is\n' +
    '421-4.7.0 suspicious due to the very low reputation of the sending IP address. - gsmtp', SLOW],
  ['google-ip-blocked', 'google', '550-5.7.1 [1.2.3.4] Our system has detected an unusual rate of\n' +
    '550-5.7.1 unsolicited mail originating from your IP address. To protect our\n' +
    '550 5.7.1 users from spam, mail sent from your IP address has been blocked. - gsmtp', { kind: 'out', ms: 4 * HOUR }],
  ['microsoft-ip-reputation-rate', 'microsoft', '451 4.7.650 The mail server [1.2.3.4] has been temporarily rate limited ' +
    'due to IP reputation. For e-mail delivery information, see https://postmaster.live.com (S775)',
  { kind: 'pause', ms: 30 * 60_000 }],
  ['microsoft-server-busy', 'microsoft', '451 4.7.500 Server busy. Please try again later from [1.2.3.4]. (AS77712344) ' +
    '[DB5EUR03FT012.eop-EUR03.prod.protection.outlook.com]', SLOW],
  ['microsoft-server-busy', 'microsoft', '451 4.7.699 Server busy. Please try again later from [1.2.3.4]. (AS800)', SLOW],
  ['microsoft-consumer-rate', 'microsoft', '421 RP-001 (BAY004-MC1F13) Unfortunately, some messages from 1.2.3.4 weren\'t ' +
    'sent. Please try again. We have limits for how many messages can be sent per hour and per day.', SLOW],
  ['microsoft-block-list', 'microsoft', '550 5.7.1 Unfortunately, messages from [1.2.3.4] weren\'t sent. Please contact ' +
    'your Internet service provider since part of their network is on our block list (S3150). You can also refer your ' +
    'provider to http://mail.live.com/mail/troubleshooting.aspx#errors. [AM2PEPF0001C708.eurprd05.prod.outlook.com]',
  { kind: 'out', ms: 4 * HOUR }],
  ['microsoft-block-list', 'microsoft', '550 5.7.1 Unfortunately, messages from [1.2.3.4] weren\'t sent. (S3140)',
    { kind: 'out', ms: 4 * HOUR }],
  ['microsoft-banned-ip', 'microsoft', '550 5.7.606 Access denied, banned sending IP [1.2.3.4]. To request removal from ' +
    'this list please visit https://sender.office.com/ and follow the directions. (AS16012609)', { kind: 'out', ms: 4 * HOUR }],
  ['yahoo-deferred', 'yahoo', '421 4.7.0 [TSS02] Messages from 1.2.3.4 temporarily deferred due to user complaints or ' +
    'because the IP/domain is in the unverified category. ec=ax9 [16]', SLOW],
  ['yahoo-deferred', 'yahoo', '421 4.7.0 [TS01] Messages from 1.2.3.4 temporarily deferred due to user complaints', SLOW],
  ['yahoo-volume-or-complaints', 'yahoo', '421 4.7.0 [TSS04] Messages from 1.2.3.4 temporarily deferred due to unexpected ' +
    'volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes', { kind: 'pause', ms: 2 * HOUR }],
  ['yahoo-volume-or-complaints', 'yahoo', '421 [IPTS04] Messages from 1.2.3.4 temporarily deferred due to unexpected ' +
    'volume or user complaints', { kind: 'pause', ms: 2 * HOUR }],
  ['yahoo-volume-or-complaints-long', 'yahoo', '421 4.7.0 [TSS05] Messages from 1.2.3.4 temporarily deferred due to user ' +
    'complaints', { kind: 'pause', ms: 4 * HOUR }],
  ['yahoo-permanently-deferred', 'yahoo', '421 4.7.1 [TS03] All messages from 1.2.3.4 will be permanently deferred; ' +
    'Retrying will NOT succeed. See http://postmaster.yahoo.com/421-ts03.html', { kind: 'out', ms: 4 * HOUR }],
  ['yahoo-blocked', 'yahoo', '553 5.7.2 [TSS09] All messages from 1.2.3.4 will be permanently deferred; Retrying will NOT ' +
    'succeed. See https://postmaster.yahooinc.com/error-codes', { kind: 'out', ms: 4 * HOUR }],
  ['yahoo-blocked', 'yahoo', '553 5.7.1 [BL21] Connections will not be accepted from 1.2.3.4, because the ip is in ' +
    'Spamhaus\'s list; see http://postmaster.yahoo.com/550-bl23.html', { kind: 'out', ms: 4 * HOUR }],
  ['orange-too-many-connections', 'orange', '421 mwinf5c10 ME Trop de connexions, veuillez verifier votre configuration. ' +
    'Too many connections, slow down. OFR005_104 [104]', SLOW],
  ['too-many-connections', 'site:mx.example.net', '421 4.7.0 mx.example.net Error: too many connections from 1.2.3.4', SLOW],
  ['too-many-connections', 'microsoft', '421 4.3.2 The maximum number of concurrent connections has exceeded a limit, ' +
    'closing transmission channel', SLOW],
  ['too-many-connections', 'gmx', '421 gmx.net (mxgmx117) Nemesis ESMTP Service not available. Too many sessions', SLOW],
  ['rate-limited', 'site:mx.example.net', '450 4.7.1 Client host rejected: rate limited, try again later', SLOW],
  ['rate-limited', 'comcast', '452 4.5.3 Too many messages from this address, slow down', SLOW],
  ['rate-limited', 'site:mx.example.net', 'smtp; 451 Sending rate exceeded for 1.2.3.4', SLOW]
]

test('reply rules: every rule matches its examples, and the example goes to that rule first', () => {
  for (const [rule, provider, reply, action] of EXAMPLES) {
    assert.deepEqual(replyAction(provider, reply), { rule, action }, `${provider}: ${reply}`)
  }
  const covered = new Set(EXAMPLES.map(([rule]) => rule))
  for (const rule of REPLY_RULES) assert.ok(covered.has(rule.id), `${rule.id} has an example`)
  const ids = REPLY_RULES.map((r) => r.id)
  assert.equal(new Set(ids).size, ids.length, 'rule ids are unique')
})

test('reply rules: a multi-line reply already folded into one line reads the same', () => {
  const folded = '421-4.7.28 [1.2.3.4] Our system has detected an unusual rate of 421-4.7.28 unsolicited mail originating ' +
    'from your IP address. To protect our 421-4.7.28 users from spam, mail sent from your IP address has been temporarily ' +
    '421-4.7.28 rate limited. Please visit 421 4.7.28 review our Bulk Email Senders Guidelines.'
  assert.deepEqual(replyAction('google', folded), { rule: 'google-ip-rate-limited', action: SLOW })
  assert.deepEqual(replyAction('site:mx.example.net', '451-4.7.1 You are sending too fast: your 451-4.7.1 rate ' +
    '451 4.7.1 limit is exceeded'), { rule: 'rate-limited', action: SLOW })
})

test('reply rules: a provider\'s rule does not apply to another provider\'s lanes', () => {
  assert.equal(replyAction('microsoft', '421 4.7.0 [TSS04] Messages from 1.2.3.4 temporarily deferred due to unexpected volume'),
    undefined)
  assert.equal(replyAction('site:mx.example.net', '451 4.7.500 Server busy. Please try again later from [1.2.3.4]. (AS1)'),
    undefined)
  assert.equal(replyAction('yahoo', '550 5.7.606 Access denied, banned sending IP [1.2.3.4]'), undefined)
})

test('reply rules: greylisting and "try again later" without rate words stay per-recipient retries', () => {
  const replies: Array<[string, string]> = [
    ['site:mx.example.net', '451 4.7.1 Greylisting in action, please come back later'],
    ['site:mx.example.net', '450 4.2.0 <a@example.net>: Recipient address rejected: Greylisted, see ' +
      'http://postgrey.schweikert.ch/help/example.net.html'],
    ['site:mx.example.net', '451 4.7.1 Please try again later'],
    ['site:mx.example.net', '451-4.7.1 Greylisted, please try again\n451 4.7.1 in 5 minutes'],
    ['google', '421-4.7.0 Try again later, closing connection. (EHLO)\n421 4.7.0  a1si2 - gsmtp'],
    ['google', '451 4.3.0 Mail server temporarily rejected message. a1si2 - gsmtp'],
    ['microsoft', '451 4.7.0 Temporary server error. Please try again later. PRX4'],
    ['microsoft', '451 4.4.62 Mail sent to the wrong Office 365 region. ATTR35'],
    ['yahoo', '421 4.7.0 [GL01] Message from (1.2.3.4) temporarily deferred'],
    ['site:mx.example.net', '421 4.3.2 Service shutting down, closing transmission channel']
  ]
  for (const [provider, reply] of replies) assert.equal(replyAction(provider, reply), undefined, reply)
})

test('reply rules: authentication failures and per-recipient limits are not about the source', () => {
  const replies: Array<[string, string]> = [
    ['google', '550-5.7.26 This mail has been blocked because the sender is unauthenticated. Gmail requires all senders ' +
      'to authenticate with either SPF or DKIM.'],
    ['google', '421-4.7.26 This mail has been rate limited because it is unauthenticated. Gmail requires all senders to\n' +
      '421-4.7.26 authenticate with either SPF or DKIM.'],
    ['google', '421-4.7.27 This mail has been rate limited because SPF did not pass. - gsmtp'],
    ['google', '421-4.7.30 This mail has been rate limited because DKIM did not pass. - gsmtp'],
    ['google', '421-4.7.32 This mail has been rate limited because the From: header is not aligned. - gsmtp'],
    ['site:mx.example.net', '421 4.7.26 This mail has been rate limited because it is unauthenticated.'],
    ['site:mx.example.net', '451 4.7.0 Rate limited: message failed DMARC'],
    ['google', '421-4.7.0 This message does not have authentication information or fails to pass\n' +
      '421 4.7.0 authentication checks (SPF or DKIM). - gsmtp'],
    ['google', '421-4.7.28 Gmail has detected an unusual rate of unsolicited mail originating\n' +
      '421-4.7.28 from your SPF domain [example.com]. To protect our users from spam, mail sent\n' +
      '421 4.7.28 from your domain has been temporarily rate limited. - gsmtp'],
    ['google', '421-4.7.28 Gmail has detected an unusual rate of unsolicited mail originating from your DKIM domain ' +
      '[example.com]. mail sent from your domain has been temporarily rate limited. - gsmtp'],
    ['google', '421 4.7.28 Gmail has detected an unusual rate of unsolicited mail containing one of your URL domains. ' +
      'To protect our users from spam, mail with the URL has been temporarily limited. - gsmtp'],
    ['google', '421-4.7.0 [1.2.3.4] Our system has detected that this message is suspicious due to the very low\n' +
      '421 4.7.0 reputation of the sending domain. - gsmtp'],
    ['google', '450-4.2.1 The user you are trying to contact is receiving mail at a rate that\n' +
      '450 4.2.1 prevents additional messages from being delivered. - gsmtp'],
    ['site:mx.example.net', '450 4.2.1 Recipient rate limited, try again later'],
    ['site:mx.example.net', '450 Recipient rate limit exceeded, try again later'],
    ['site:mx.example.net', '451 4.7.1 <a@example.net>: user is receiving mail at a rate that prevents delivery'],
    ['site:mx.example.net', '452 4.2.2 Mailbox full: too many messages'],
    ['microsoft', '432 4.3.2 STOREDRV.Deliver; recipient thread limit exceeded'],
    ['google', '550-5.1.1 The email account that you tried to reach does not exist.'],
    ['google', '550-5.7.1 [1.2.3.4] The IP you\'re using to send mail is not authorized to send email directly to our ' +
      'servers. Please use the SMTP relay at your service provider instead.']
  ]
  for (const [provider, reply] of replies) assert.equal(replyAction(provider, reply), undefined, reply)
})

test('reply rules: a rule without a reply code acts on transient replies only', () => {
  assert.equal(replyAction('site:mx.example.net', '554 5.7.1 Rate limit exceeded'), undefined)
  assert.equal(replyAction('site:mx.example.net', '550 Too many connections'), undefined)
  assert.equal(replyAction('yahoo', '554 5.7.9 [TSS04] Message not accepted'), undefined)
  assert.equal(replyAction('site:mx.example.net', 'rate limited'), undefined, 'no reply code')
  assert.equal(replyAction('site:mx.example.net', ''), undefined)
})

test('reply rules: the table and its actions cannot be changed', () => {
  assert.ok(Object.isFrozen(REPLY_RULES))
  for (const rule of REPLY_RULES) {
    assert.ok(Object.isFrozen(rule) && Object.isFrozen(rule.action), rule.id)
    assert.ok(rule.about.length > 40, `${rule.id} says what the provider means`)
    if (rule.action.kind !== 'slow') assert.ok(rule.action.ms >= 60_000, `${rule.id}: at least a minute`)
  }
})
