import { test } from 'node:test'
import assert from 'node:assert/strict'
import { jobNamesAddressFor, type DomainOwner } from '../../../stores/inbound_raw/mod.ts'
import type { DomainRecord } from '../../../protocol/mod.ts'

// Two organisations: org_a verified shop.example, org_b verified other.example.
const owners = new Map([['shop.example', 'org_a'], ['other.example', 'org_b']])
const owner: DomainOwner = (name) => {
  const org = owners.get(name)
  return org === undefined ? undefined : { org_id: org, name } as unknown as DomainRecord
}
const ERIN = 'erin@far.example'
const job = (mailFrom: string, rcptTo: string[]): { mail_from: string, rcpt_to: string[] } => ({ mail_from: mailFrom, rcpt_to: rcptTo })

test('a waiting job concerns the organisation when its envelope names the address, in any case, as sender or recipient', () => {
  assert.equal(jobNamesAddressFor(job('Erin@FAR.example', ['support@shop.example']), 'org_a', ERIN, owner), true)
  assert.equal(jobNamesAddressFor(job('', ['support@shop.example', 'ERIN@far.example']), 'org_a', ERIN, owner), true)
  assert.equal(jobNamesAddressFor(job('bob@far.example', ['support@shop.example']), 'org_a', ERIN, owner), false, 'another sender')
})

test('only mail received at one of the organisation\'s domains, or a name under one, concerns it', () => {
  assert.equal(jobNamesAddressFor(job(ERIN, ['support@other.example']), 'org_a', ERIN, owner), false, 'the other organisation\'s mail')
  assert.equal(jobNamesAddressFor(job(ERIN, ['support@other.example']), 'org_b', ERIN, owner), true)
  assert.equal(jobNamesAddressFor(job(ERIN, ['support@other.example', 'x@shop.example']), 'org_a', ERIN, owner), true, 'both receive it')
  assert.equal(jobNamesAddressFor(job(ERIN, ['b+tag@bounces.shop.example']), 'org_a', ERIN, owner), true, 'a bounce address')
  assert.equal(jobNamesAddressFor(job(ERIN, ['x@shop.example.evil.test']), 'org_a', ERIN, owner), false, 'a name that only starts alike')
})
