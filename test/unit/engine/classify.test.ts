import { test } from 'node:test'
import assert from 'node:assert/strict'
import { classifyAccepted, classifyError, tryNextHost } from '../../../engine/actor/classify.ts'
import { bounceCategory } from '../../../protocol/mod.ts'

test('2xx is delivered with the server reply', () => {
  assert.deepEqual(classifyAccepted({ response: '250 2.0.0 Ok: queued as ABC' }),
    { kind: 'delivered', response: '250 2.0.0 Ok: queued as ABC' })
})

test('5xx at RCPT or DATA is a hard bounce with the reply code', () => {
  assert.deepEqual(
    classifyError({
      code: 'EENVELOPE', responseCode: 550, command: 'RCPT TO', response: '550 5.1.1 <x@y.z>: user unknown',
      message: 'Recipient command failed'
    }),
    { kind: 'bounced', code: '550', message: '550 5.1.1 <x@y.z>: user unknown' })
  assert.equal(classifyError({ code: 'EMESSAGE', responseCode: 554, command: 'DATA', response: '554 spam' }).kind, 'bounced')
})

test('4xx is deferred with the server reply', () => {
  assert.deepEqual(classifyError({ code: 'EENVELOPE', responseCode: 451, command: 'RCPT TO', response: '451 4.7.1 try later' }),
    { kind: 'deferred', response: '451 4.7.1 try later' })
  assert.equal(classifyError({ code: 'EMESSAGE', responseCode: 421, command: 'DATA' }).kind, 'deferred')
})

test('connection level failures are deferred', () => {
  for (const code of ['ECONNREFUSED', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNECTION', 'ETLS', 'EPROTOCOL']) {
    const o = classifyError({ code, message: 'connect failed', command: 'CONN' })
    assert.equal(o.kind, 'deferred', code)
    assert.match((o as { response: string }).response, new RegExp(code))
  }
  assert.equal(classifyError({ message: 'Greeting never received', code: 'ETIMEDOUT', command: 'CONN' }).kind, 'deferred')
})

test('no mail host of a bound source\'s address family is deferred, never a bounce', () => {
  const o = classifyError({ code: 'ENOHOSTFORFAMILY', message: 'no mail host of v4only.example has an IPv6 address' })
  assert.deepEqual(o, { kind: 'deferred', response: 'ENOHOSTFORFAMILY: no mail host of v4only.example has an IPv6 address' })
})

test('a local address the host does not have (an unbound source) is deferred', () => {
  // how nodemailer reports a socket that could not be bound: ESOCKET, the system's code in `originalCode`, no reply
  const o = classifyError({ code: 'ESOCKET', message: 'bind EADDRNOTAVAIL 192.0.2.7', command: 'CONN' })
  assert.deepEqual(o, { kind: 'deferred', response: 'ESOCKET: bind EADDRNOTAVAIL 192.0.2.7' })
})

test('a domain without mail host and a null MX are hard bounces', () => {
  assert.deepEqual(classifyError({ code: 'ENOMAILHOST', message: 'nope.invalid has no MX or A record' }),
    { kind: 'bounced', code: '550', message: '5.1.2 nope.invalid has no MX or A record' })
  assert.equal((classifyError({ code: 'ENULLMX', message: 'null MX' }) as { code: string }).code, '556')
})

test('a domain whose mail hosts are all non-public is a domain bounce that does not suppress', () => {
  const o = classifyError({
    code: 'ENONPUBLICMAILHOST', message: 'mail host mx.x.example of x.example is at 10.0.0.1, not a public address'
  })
  assert.deepEqual(o, {
    kind: 'bounced', code: '550', message: '5.4.4 mail host mx.x.example of x.example is at 10.0.0.1, not a public address', suppress: false
  })
  assert.equal(bounceCategory({ code: '550', text: (o as { message: string }).message }), 'domain')
})

test('errors that mean the message cannot be built are failed, unknown errors deferred', () => {
  assert.equal(classifyError({ code: 'EENVELOPE', message: 'No recipients defined' }).kind, 'failed')
  assert.equal(classifyError({ code: 'EFILEACCESS', message: 'file access rejected' }).kind, 'failed')
  assert.equal(classifyError({}).kind, 'deferred')
  assert.equal(classifyError({ responseCode: 'x' as unknown as number, message: 'odd' }).kind, 'deferred')
})

test('only a host that did not answer sends the attempt on to the next MX host', () => {
  assert.equal(tryNextHost({ code: 'ESOCKET', message: 'connect ECONNREFUSED' }), true)
  assert.equal(tryNextHost({ code: 'ETIMEDOUT', message: 'Greeting never received' }), true)
  assert.equal(tryNextHost({ code: 'EENVELOPE', responseCode: 451, response: '451 later' }), false)
  assert.equal(tryNextHost({ code: 'EENVELOPE', responseCode: 550, response: '550 no' }), false)
  assert.equal(tryNextHost({ code: 'EFILEACCESS', message: 'x' }), false)
})

test('a refused or failed STARTTLS is deferred whatever the reply: it speaks of the connection, not of the recipient', () => {
  const refused = classifyError({ code: 'ETLS', responseCode: 502, response: '502 5.5.1 command not recognized', command: 'STARTTLS' })
  assert.equal(refused.kind, 'deferred')
  assert.match((refused as { response: string }).response, /^ETLS: STARTTLS failed: 502/)
  assert.equal(classifyError({ code: 'ETLS', message: 'Error initiating TLS - handshake' }).kind, 'deferred')
})
