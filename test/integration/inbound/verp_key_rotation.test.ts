import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOrg } from '../../helpers/outbox.ts'
import { EventReader } from '../../helpers/events.ts'
import { ReportScenario, dsn } from '../../helpers/reports.ts'
import { eventually } from '../../helpers/waiting.ts'
import { runCli } from '../../helpers/cli.ts'
import { decodeVerp } from '../../../protocol/mod.ts'

/** Rotating the return-path key: new mail is signed with the new key, addresses issued before keep working. */
let s: ReportScenario
let org: TestOrg
let events: EventReader

before(async () => {
  s = await ReportScenario.start()
  org = await s.ob.org()
  events = await EventReader.open(s.ob.proc.nc, org.orgId)
})
after(async () => {
  events.close()
  await s.close()
})

const bounce = (to: string, recipient: string, id: string): string =>
  dsn({ to, recipient, status: '5.1.1', diagnostic: '550 5.1.1 user unknown', originalId: id, domain: org.domain })

test('an address issued before a rotation still works after it; a retired key\'s addresses do not', async () => {
  const env = { NATS_URL: s.ob.nats.url, REDIS_URL: s.ob.redisServer.url }
  const old = await s.send(org, 'before@remote.test')
  const oldKey = decodeVerp(old.returnPath)!.keyId

  const rotated = await runCli(['verp-keys', 'rotate'], env)
  assert.equal(rotated.code, 0, rotated.stderr)
  const created = JSON.parse(rotated.stdout) as { id: string, created_at: string }
  assert.notEqual(created.id, oldKey)
  assert.doesNotMatch(rotated.stdout, /secret/, 'the secret is never printed')
  await eventually(() => s.ob.proc.cp.verpKeys.signing().id === created.id, 'the new key to reach this process')

  const fresh = await s.send(org, 'after@remote.test')
  assert.equal(decodeVerp(fresh.returnPath)!.keyId, created.id, 'new mail is signed with the new key')
  await s.deliver(old.returnPath, bounce(old.returnPath, 'before@remote.test', old.id))
  await s.deliver(fresh.returnPath, bounce(fresh.returnPath, 'after@remote.test', fresh.id))
  const bounced = await events.waitFor('bounced', 2)
  assert.deepEqual(bounced.map((e) => e.message_id).sort(), [old.id, fresh.id].sort())

  const list = await runCli(['verp-keys', 'list'], env)
  assert.deepEqual((JSON.parse(list.stdout) as Array<{ id: string }>).map((k) => k.id), [created.id, oldKey], 'newest first')
  const refused = await runCli(['verp-keys', 'retire', created.id], env)
  assert.notEqual(refused.code, 0, 'the signing key cannot be retired')
  assert.match(refused.stderr, /newest/)

  assert.equal((await runCli(['verp-keys', 'retire', oldKey], env)).code, 0)
  await eventually(() => s.ob.proc.cp.verpKeys.key(oldKey) === undefined, 'the retirement to reach this process')
  const before = await s.dropped('unknown_key')
  await s.deliver(old.returnPath, bounce(old.returnPath, 'before@remote.test', old.id))
  await eventually(async () => await s.dropped('unknown_key') > before, 'an unknown_key drop')
  assert.equal(events.of('bounced').length, 2)
})
