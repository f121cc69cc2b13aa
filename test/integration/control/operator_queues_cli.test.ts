import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox } from '../../helpers/outbox.ts'
import { runCli } from '../../helpers/cli.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * `outbox queue …`: a hold the CLI makes is the one the operator API lists and every engine's mirror holds, and names
 * the local user; the CLI refuses what the API refuses (exit 2), and a release of nothing held is exit 1.
 */
let ob: TestOutbox
let key: string
let env: Record<string, string>
before(async () => {
  ob = await TestOutbox.start()
  key = (await ob.proc.cp.operatorKeys.create('cli')).value
  env = { NATS_URL: ob.nats.url, REDIS_URL: ob.redisServer.url }
})
after(async () => { await ob.close() })

async function cli (...args: string[]): Promise<any> {
  const r = await runCli(['queue', ...args], env)
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

test('hold, holds, list, release and bounce with the CLI; the API and the mirror agree', async () => {
  const hold = await cli('hold', '--domain', 'CLI.Example', '--reason', 'testing')
  assert.deepEqual(hold.selector, { by: 'domain', value: 'cli.example' })
  assert.equal(hold.held_by.key_id, null)
  assert.match(hold.held_by.name, /^cli:/)
  assert.deepEqual((await cli('holds')).data.map((h: { selector: unknown }) => h.selector), [{ by: 'domain', value: 'cli.example' }])
  await eventually(() => ob.proc.cp.queues.hold({ by: 'domain', value: 'cli.example' }) !== undefined, 'the hold in the mirror')
  const api = await ob.request('GET', '/v1/operator/queues/holds', { key })
  assert.equal(api.body.data[0].reason, 'testing')

  const listed = await cli('list', '--by', 'domain')
  assert.deepEqual(listed.data, [])
  assert.equal(listed.total, 0)

  const order = await cli('bounce', '--domain', 'cli.example', '--only-held')
  assert.equal(order.order.action, 'bounce')
  assert.equal(order.order.only_held, true)
  assert.equal(order.woken, 0)

  await cli('release', '--domain', 'cli.example')
  const again = await runCli(['queue', 'release', '--domain', 'cli.example'], env)
  assert.equal(again.code, 1)
  assert.match(again.stderr, /No hold on domain cli\.example/)

  const bad = await runCli(['queue', 'hold', '--domain', 'a.example', '--org', 'org_x'], env)
  assert.equal(bad.code, 2)
  const badValue = await runCli(['queue', 'hold', '--domain', 'not a domain'], env)
  assert.equal(badValue.code, 2)
  assert.match(badValue.stderr, /value is not a domain name/)
})
