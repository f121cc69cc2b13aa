import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox } from '../../helpers/outbox.ts'

/**
 * Failed operator authentications go through the failed-authentication throttle every key goes through: past 30 a
 * minute from one address the answer is 429; a valid operator key from that address is still served.
 */
let ob: TestOutbox
before(async () => { ob = await TestOutbox.start() })
after(async () => { await ob.close() })

/** The bucket gives one failure back every 2 s, so a slow run answers a few more than 30 before the first 429. */
const allowedBefore = (started: number): number => 30 + Math.ceil((Date.now() - started) / 2000)

test('guessed operator keys from one address are cut off with 429; the real key is still answered', async () => {
  const { value } = await ob.proc.cp.operatorKeys.create('real')
  const started = Date.now()
  let unauthorized = 0
  let limited: Awaited<ReturnType<TestOutbox['request']>> | undefined
  for (let i = 0; i < 60 && limited === undefined; i++) {
    // each guess has its own 12-character prefix, so only the address is shared
    const r = await ob.request('GET', '/v1/operator/egress/sources', { key: `ob_op_${String(i).padStart(6, '0')}${'g'.repeat(30)}` })
    if (r.status === 401) unauthorized++
    else if (r.status === 429) limited = r
    else assert.fail(`unexpected ${r.status} ${r.text}`)
  }
  assert.ok(limited !== undefined, 'guessing was cut off')
  assert.ok(unauthorized >= 30 && unauthorized <= allowedBefore(started), `${unauthorized} guesses answered before the limit`)
  assert.equal(limited.body.error.code, 'rate_limited')
  assert.match(limited.body.error.message, /from this address/)
  assert.ok(Number(limited.headers.get('retry-after')) >= 1)
  assert.equal((await ob.request('GET', '/v1/operator/egress/sources', { key: 'ob_op_' + 'h'.repeat(32) })).status, 429)
  const served = await ob.request('GET', '/v1/operator/egress/sources', { key: value })
  assert.equal(served.status, 200, served.text)
})
