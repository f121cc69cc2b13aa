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

test('31 guessed operator keys from one address get 429; the real key is still answered', async () => {
  const { value } = await ob.proc.cp.operatorKeys.create('real')
  const statuses: number[] = []
  for (let i = 0; i < 31; i++) {
    const guess = `ob_op_${String(i).padStart(6, '0')}${'g'.repeat(30)}`
    statuses.push((await ob.request('GET', '/v1/operator/egress/sources', { key: guess })).status)
  }
  assert.deepEqual(statuses.slice(0, 30), new Array(30).fill(401))
  assert.equal(statuses[30], 429)
  const refused = await ob.request('GET', '/v1/operator/egress/sources', { key: 'ob_op_' + 'h'.repeat(32) })
  assert.equal(refused.status, 429)
  assert.equal(refused.body.error.code, 'rate_limited')
  assert.ok(Number(refused.headers.get('retry-after')) >= 1)
  const served = await ob.request('GET', '/v1/operator/egress/sources', { key: value })
  assert.equal(served.status, 200)
})
