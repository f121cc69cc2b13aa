import { test } from 'node:test'
import assert from 'node:assert/strict'
import { isPrivateAddress, webhookUrlProblem } from '../../gateway/control/webhook_url.ts'

const strict = { allowPrivate: false }

test('public https URLs are accepted', () => {
  for (const url of ['https://hooks.example.com/outbox', 'https://8.8.8.8/x', 'https://[2606:4700::1111]/h', 'https://example.com:8443/a?b=c']) {
    assert.equal(webhookUrlProblem(url, strict), undefined, url)
  }
})

test('only https is accepted, and no credentials', () => {
  assert.match(webhookUrlProblem('http://example.com/h', strict)!, /https/)
  assert.match(webhookUrlProblem('ftp://example.com/h', strict)!, /https/)
  assert.match(webhookUrlProblem('not a url', strict)!, /absolute/)
  assert.match(webhookUrlProblem('https://user:pw@example.com/h', strict)!, /credentials/)
  assert.match(webhookUrlProblem('https://user@example.com/h', strict)!, /credentials/)
})

test('URLs over 2048 characters are refused', () => {
  const url = 'https://example.com/' + 'a'.repeat(2048)
  assert.match(webhookUrlProblem(url, strict)!, /2048/)
})

test('loopback, private, link-local and multicast IPv4 literals are refused', () => {
  for (const host of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '224.0.0.1', '255.255.255.255']) {
    assert.match(webhookUrlProblem(`https://${host}/h`, strict)!, /private/, host)
  }
  assert.equal(webhookUrlProblem('https://172.32.0.1/h', strict), undefined)
})

test('decimal, hexadecimal, octal and short IPv4 forms are normalised before the check', () => {
  for (const host of ['2130706433', '0x7f000001', '0x7f.1', '0177.0.0.1', '127.1', '127.0.0.1.', '017700000001', '0xA9.0xFE.0xA9.0xFE']) {
    assert.match(webhookUrlProblem(`https://${host}/h`, strict)!, /private/, host)
  }
})

test('IPv6 loopback, unique-local, link-local, multicast and IPv4-mapped forms are refused', () => {
  for (const host of ['[::1]', '[::]', '[fd00::1]', '[fc00::1]', '[fe80::1]', '[ff02::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]',
    '[::ffff:10.0.0.1]', '[::127.0.0.1]', '[64:ff9b::a00:1]']) {
    assert.match(webhookUrlProblem(`https://${host}/h`, strict)!, /private/, host)
  }
  assert.equal(webhookUrlProblem('https://[::ffff:8.8.8.8]/h', strict), undefined)
})

test('localhost names are refused', () => {
  for (const host of ['localhost', 'LOCALHOST', 'localhost.', 'api.localhost']) {
    assert.match(webhookUrlProblem(`https://${host}/h`, strict)!, /localhost/, host)
  }
})

test('allowPrivate lets private targets through but still demands https without credentials', () => {
  const open = { allowPrivate: true }
  assert.equal(webhookUrlProblem('https://127.0.0.1:9443/h', open), undefined)
  assert.equal(webhookUrlProblem('https://localhost/h', open), undefined)
  assert.match(webhookUrlProblem('http://127.0.0.1/h', open)!, /https/)
  assert.match(webhookUrlProblem('https://a:b@127.0.0.1/h', open)!, /credentials/)
})

test('isPrivateAddress ignores host names and checks literals', () => {
  assert.equal(isPrivateAddress('example.com'), false)
  assert.equal(isPrivateAddress('192.168.0.10'), true)
  assert.equal(isPrivateAddress('2001:4860:4860::8888'), false)
})
