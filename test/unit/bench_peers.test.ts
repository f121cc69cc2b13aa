import { test } from 'node:test'
import assert from 'node:assert/strict'
import { dkimDomainOf, peerBooks } from '../../bench/peers_books.ts'
import { treeCpu } from '../../bench/peers_cpu.ts'
import type { Arrival } from '../../bench/sink_process.ts'

test('peers books: lost, duplicated, without an accept, and DKIM-signed by the test domain or not', () => {
  const accepted = ['<a@x.test>', '<b@x.test>', '<c@x.test>', '<d@x.test>'].map((messageId) => ({ messageId }))
  const arrivals: Arrival[] = [
    ['<a@x.test>', 10, NaN, 'x.test'],
    ['<b@x.test>', 20, NaN, 'x.test'],
    ['<b@x.test>', 25, NaN, 'x.test'],
    ['<c@x.test>', 30, NaN, ''],
    ['<e@x.test>', 40, NaN, 'x.test'],
    ['<other@y.test>', 50, NaN, 'y.test']
  ]
  const b = peerBooks(accepted, arrivals, 'X.test', (mid) => mid.endsWith('@x.test>'))
  assert.deepEqual(b, {
    accepted: 4, lost: 1, duplicated: 1, extraCopies: 1, unacknowledged: 1, signed: 2, signedOther: 0, unsigned: 1, lastArrivalAt: 30
  })
})

test('peers books: the d= of a DKIM-Signature header', () => {
  assert.equal(dkimDomainOf('v=1; a=rsa-sha256; c=relaxed/relaxed; d=Example.COM; s=bench; h=from'), 'example.com')
  assert.equal(dkimDomainOf(undefined), '')
  assert.equal(dkimDomainOf('v=1; a=rsa-sha256'), '?')
})

test('peers CPU: children that exited between samples are counted from the master\'s reaped time', () => {
  const root = {
    start: { ppid: 1, comm: 'master', state: 'S', cpuUs: 100, reapedUs: 1000 },
    // 50 µs of its own; children reaped in the window spent 1,000 µs over their whole lives.
    end: { ppid: 1, comm: 'master', state: 'S', cpuUs: 150, reapedUs: 2000 }
  }
  const children = new Map([
    // alive throughout: 300 µs in the window
    [10, { comm: 'qmgr', first: 200, last: 500, atStart: true, aliveAtEnd: true }],
    // born and reaped in the window, last seen at 600 µs of its 700 µs life
    [11, { comm: 'smtpd', first: 100, last: 600, atStart: false, aliveAtEnd: false }],
    // alive at the start with 100 µs, reaped at 400 µs: 300 µs in the window, last seen at 350
    [12, { comm: 'smtpd', first: 100, last: 350, atStart: true, aliveAtEnd: false }]
  ])
  const r = treeCpu(root, children)
  assert.equal(r.byName.get('master'), 50)
  assert.equal(r.byName.get('qmgr'), 300)
  assert.equal(r.byName.get('smtpd'), 600 + 250)
  // exact: 50 of its own + 1,000 reaped, less the 100 the reaped pid 12 had spent before the window, + 300 of qmgr
  assert.equal(r.totalUs, 50 + 1000 - 100 + 300)
  assert.equal(r.unsampledUs, r.totalUs - (50 + 300 + 850))
})
