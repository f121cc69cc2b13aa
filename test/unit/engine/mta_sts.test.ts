import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mxMatches, parseStsPolicy, parseStsRecord } from '../../../engine/tls/sts_policy.ts'
import { tlsFailureType } from '../../../engine/tls/outbound_tls.ts'
import { buildTlsReport, parseTlsRptRecord } from '../../../engine/tls/tls_report.ts'

test('the _mta-sts record: one v=STSv1 record with an id, else no policy', () => {
  assert.equal(parseStsRecord(['v=STSv1; id=20160831085700Z;']), '20160831085700Z')
  assert.equal(parseStsRecord(['some other text', 'v=STSv1; id=abc']), 'abc')
  assert.equal(parseStsRecord(['v=STSv1; id=a', 'v=STSv1; id=b']), undefined, 'two records: none')
  assert.equal(parseStsRecord(['v=STSv1;']), undefined)
  assert.equal(parseStsRecord(['v=STSv1; id=not-alnum']), undefined)
})

test('a policy file is parsed per RFC 8461 §3.2, and anything else is refused with a reason', () => {
  const p = parseStsPolicy('version: STSv1\r\nmode: enforce\r\nmx: mail.example.com\r\nmx: *.Example.net.\r\nmax_age: 604800\r\n')
  assert.deepEqual(p, {
    mode: 'enforce', maxAgeS: 604800, mx: ['mail.example.com', '*.example.net'],
    lines: ['version: STSv1', 'mode: enforce', 'mx: mail.example.com', 'mx: *.Example.net.', 'max_age: 604800']
  })
  assert.ok('invalid' in parseStsPolicy('version: STSv2\nmode: enforce\nmx: a\nmax_age: 1'))
  assert.ok('invalid' in parseStsPolicy('version: STSv1\nmode: strict\nmx: a\nmax_age: 1'))
  assert.ok('invalid' in parseStsPolicy('version: STSv1\nmode: enforce\nmax_age: 1'), 'no mx')
  assert.ok('invalid' in parseStsPolicy('<html>not a policy</html>'))
  assert.equal((parseStsPolicy('version: STSv1\nmode: testing\nmx: a\nmax_age: 99999999999') as { maxAgeS: number }).maxAgeS, undefined,
    'an 11-digit max_age is refused')
  assert.equal((parseStsPolicy('version: STSv1\nmode: testing\nmx: a\nmax_age: 9999999999') as { maxAgeS: number }).maxAgeS, 31_557_600)
})

test('MX patterns: exact names, and a wildcard for exactly one leftmost label (RFC 8461 §4.1)', () => {
  const patterns = ['mx.example.com', '*.mail.example.net']
  assert.equal(mxMatches('MX.Example.com.', patterns), true)
  assert.equal(mxMatches('a.mail.example.net', patterns), true)
  assert.equal(mxMatches('mail.example.net', patterns), false)
  assert.equal(mxMatches('a.b.mail.example.net', patterns), false)
  assert.equal(mxMatches('mx2.example.com', patterns), false)
})

test('a failed verified TLS session gets its RFC 8460 result type from nodemailer\'s error', () => {
  // a handshake that fails: nodemailer's ESOCKET keeps the TLS error's code as originalCode
  const handshake = (originalCode: string): string | undefined => tlsFailureType({ code: 'ESOCKET', originalCode, command: 'CONN' })
  assert.equal(handshake('DEPTH_ZERO_SELF_SIGNED_CERT'), 'certificate-not-trusted')
  assert.equal(handshake('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), 'certificate-not-trusted')
  assert.equal(handshake('ERR_TLS_CERT_ALTNAME_INVALID'), 'certificate-host-mismatch')
  assert.equal(handshake('CERT_HAS_EXPIRED'), 'certificate-expired')
  assert.equal(handshake('ERR_SSL_WRONG_VERSION_NUMBER'), 'validation-failure')
  assert.equal(handshake('ECONNRESET'), undefined)
  assert.equal(tlsFailureType({ code: 'ETLS', command: 'STARTTLS', message: 'Error upgrading connection with STARTTLS: 502 5.5.1' }),
    'starttls-not-supported')
  assert.equal(tlsFailureType({ code: 'ECONNECTION', message: 'connect ECONNREFUSED' }), undefined)
})

test('the _smtp._tls record gives its mailto: and https: rua', () => {
  assert.deepEqual(parseTlsRptRecord(['v=TLSRPTv1; rua=mailto:r@example.com, https://r.example.com/tlsrpt']),
    ['mailto:r@example.com', 'https://r.example.com/tlsrpt'])
  assert.deepEqual(parseTlsRptRecord(['v=TLSRPTv1; rua=http://plain.example.com']), [])
  assert.deepEqual(parseTlsRptRecord(['v=TLSRPTv1; rua=mailto:a@x', 'v=TLSRPTv1; rua=mailto:b@x']), [])
})

test('a report carries the RFC 8460 §4.4 fields', () => {
  const report = buildTlsReport('2026-11-27', 'example.com', {
    policy: { type: 'sts', strings: ['version: STSv1', 'mode: testing'], mx: ['*.example.com'] },
    ok: 3,
    failures: [{ detail: { 'result-type': 'certificate-expired', 'receiving-mx-hostname': 'mx.example.com' }, count: 2 }]
  }, { organization: 'outbox.example', contact: 'postmaster@outbox.example' }, 'r1')
  assert.deepEqual(report, {
    'organization-name': 'outbox.example',
    'date-range': { 'start-datetime': '2026-11-27T00:00:00Z', 'end-datetime': '2026-11-27T23:59:59Z' },
    'contact-info': 'postmaster@outbox.example',
    'report-id': '2026-11-27.r1@outbox.example',
    policies: [{
      policy: {
        'policy-type': 'sts',
        'policy-string': ['version: STSv1', 'mode: testing'],
        'policy-domain': 'example.com',
        'mx-host': ['*.example.com']
      },
      summary: { 'total-successful-session-count': 3, 'total-failure-session-count': 2 },
      'failure-details': [{ 'result-type': 'certificate-expired', 'receiving-mx-hostname': 'mx.example.com', 'failed-session-count': 2 }]
    }]
  })
})
