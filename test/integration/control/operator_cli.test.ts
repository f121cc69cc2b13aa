import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { runCli } from '../../helpers/cli.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * `outbox egress …` round trip: what the CLI writes, the operator API reads (and the gateway's mirror holds); the
 * CLI refuses what the API refuses, with exit status 2 for bad input and 1 for a record that is missing or in use.
 */
let ob: TestOutbox
let org: TestOrg
let key: string
let env: Record<string, string>
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  key = (await ob.proc.cp.operatorKeys.create('cli')).value
  env = { NATS_URL: ob.nats.url }
})
after(async () => { await ob.close() })

async function cli (...args: string[]): Promise<any> {
  const r = await runCli(['egress', ...args], env)
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

test('sources, pools, an assignment and limits made with the CLI are what the API shows', async () => {
  const source = await cli('source', 'add', 'mta1', '--address', '192.0.2.10', '--ehlo', 'mta1.example.com', '--warmup')
  assert.equal(source.name, 'mta1')
  assert.equal(typeof source.warmup.started_at, 'string')
  await cli('source', 'add', 'mta2', '--address', '2001:db8::2', '--ehlo', 'mta2.example.com')
  assert.deepEqual((await cli('source', 'list')).map((s: { name: string }) => s.name), ['mta1', 'mta2'])

  const pool = await cli('pool', 'set', 'bulk', 'mta1:80', 'mta2')
  assert.deepEqual(pool.sources, [{ source: 'mta1', weight: 80 }, { source: 'mta2', weight: 100 }])
  assert.deepEqual((await cli('pool', 'list')).map((p: { name: string }) => p.name), ['bulk', 'default'])

  assert.deepEqual(await cli('assign', '--org', org.orgId, '--pool', 'bulk'), { organization_id: org.orgId, egress_pool: 'bulk' })
  assert.deepEqual(await cli('assign', '--org', org.orgId, '--domain', org.domainId, '--pool', 'default'), {
    organization_id: org.orgId, domain_id: org.domainId, egress_pool: 'default', effective_pool: 'default'
  })
  assert.deepEqual(await cli('assign', '--org', org.orgId, '--domain', org.domainId, '--inherit'), {
    organization_id: org.orgId, domain_id: org.domainId, egress_pool: null, effective_pool: 'bulk'
  })
  await ob.proc.cp.streams.create(org.orgId, 'news', { name: 'Newsletter' })
  assert.deepEqual(await cli('assign', '--org', org.orgId, '--stream', 'news', '--pool', 'bulk'), {
    organization_id: org.orgId, stream: 'news', egress_pool: 'bulk'
  })
  const streamInUse = await runCli(['egress', 'pool', 'remove', 'bulk'], env)
  assert.equal(streamInUse.code, 1)
  assert.match(streamInUse.stderr, /1 stream\(s\)/)
  assert.deepEqual(await cli('assign', '--org', org.orgId, '--stream', 'news', '--inherit'), {
    organization_id: org.orgId, stream: 'news', egress_pool: null
  })
  const noStream = await runCli(['egress', 'assign', '--org', org.orgId, '--stream', 'ghost', '--pool', 'bulk'], env)
  assert.equal(noStream.code, 1)
  assert.match(noStream.stderr, /has no stream with id ghost/)

  await cli('limits', 'set', 'google', 'maxConnections=5', 'tls=required')
  const shown = await cli('limits', 'set', 'google', 'tls=', 'messagesPerMinute=300')
  assert.deepEqual(shown, { limits: { google: { maxConnections: 5, messagesPerMinute: 300 } } })
  assert.deepEqual(await cli('limits', 'show'), shown)
  // one source's own overrides, over the installation's
  await cli('limits', 'set', 'google', '--source', 'mta1', 'maxConnections=1', 'tls=required')
  const own = await cli('limits', 'set', '--source', 'mta1', 'google', 'tls=')
  assert.deepEqual(own, { source: 'mta1', limits: { google: { maxConnections: 1 } } })
  assert.deepEqual(await cli('limits', 'show', '--source', 'mta1'), own)
  assert.deepEqual(await cli('limits', 'show'), shown, 'the installation\'s are unchanged')

  await eventually(() => ob.proc.cp.orgs.get(org.orgId)?.egress_pool === 'bulk', 'the assignment in the gateway\'s mirror')
  const api = await ob.request('GET', '/v1/operator/egress/pools/bulk', { key })
  assert.deepEqual(api.body.sources, pool.sources)
  assert.deepEqual((await ob.request('GET', '/v1/operator/egress/limits', { key })).body, shown)
  await eventually(() => ob.proc.cp.egress.source('mta1')?.limits !== undefined, 'the source\'s overrides in the gateway\'s mirror')
  assert.deepEqual((await ob.request('GET', '/v1/operator/egress/sources/mta1/limits', { key })).body, own)

  assert.deepEqual(await cli('source', 'remove', 'mta2'), { name: 'mta2', removed_from_pools: ['bulk'] })
  const last = await runCli(['egress', 'source', 'remove', 'mta1'], env)
  assert.equal(last.code, 1)
  assert.match(last.stderr, /^outbox: The source mta1 is the last one of the pool bulk/)
  const inUse = await runCli(['egress', 'pool', 'remove', 'bulk'], env)
  assert.equal(inUse.code, 1)
  assert.match(inUse.stderr, /assigned to 1 organisation/)
  await cli('assign', '--org', org.orgId, '--pool', 'default')
  assert.deepEqual(await cli('pool', 'remove', 'bulk'), { removed: 'bulk' })
})

test('the CLI refuses what the API refuses, naming each bad field', async () => {
  const badIp = await runCli(['egress', 'source', 'add', 'x1', '--address', '300.1.1.1', '--ehlo', 'not_a_host'], env)
  assert.equal(badIp.code, 2)
  assert.match(badIp.stderr, /address must be an IPv4 or IPv6 address literal/)
  assert.match(badIp.stderr, /ehlo must be a lower-case host name/)
  const unknownSource = await runCli(['egress', 'pool', 'set', 'p', 'ghost'], env)
  assert.equal(unknownSource.code, 1)
  assert.match(unknownSource.stderr, /No source named ghost/)
  const badWeight = await runCli(['egress', 'pool', 'set', 'p', 'ghost:0'], env)
  assert.equal(badWeight.code, 2)
  assert.match(badWeight.stderr, /sources\[0\]\.weight must be an integer from 1 to 100/)
  const unknownPool = await runCli(['egress', 'assign', '--org', org.orgId, '--pool', 'ghost'], env)
  assert.equal(unknownPool.code, 1)
  assert.match(unknownPool.stderr, /No pool named ghost/)
  const badLimit = await runCli(['egress', 'limits', 'set', 'google', 'maxConnections=0'], env)
  assert.equal(badLimit.code, 2)
  const noSource = await runCli(['egress', 'limits', 'set', 'google', '--source', 'ghost', 'maxConnections=1'], env)
  assert.equal(noSource.code, 1)
  assert.match(noSource.stderr, /No source named ghost/)
  const usage = await runCli(['egress', 'pool'], env)
  assert.equal(usage.code, 2)
  assert.match(usage.stderr, /usage: outbox egress/)
})
