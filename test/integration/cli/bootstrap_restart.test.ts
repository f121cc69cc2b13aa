import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox } from '../../helpers/outbox.ts'

let nats: ServerProcess
let redis: ServerProcess
before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
})
after(async () => {
  await nats.dispose()
  await redis.dispose()
})

interface LogLine { level: number, msg: string }

/** One start on the shared NATS and Redis with these bootstrap settings, its log lines kept. */
async function start (adminKey: string, domain: string): Promise<{ ob: TestOutbox, lines: LogLine[] }> {
  const stream = new PassThrough()
  const lines: LogLine[] = []
  let rest = ''
  stream.on('data', (d: Buffer) => {
    rest += d.toString()
    let nl: number
    while ((nl = rest.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(rest.slice(0, nl)) as LogLine)
      rest = rest.slice(nl + 1)
    }
  })
  const ob = await TestOutbox.start({
    nats, redis, env: { OB_ROLE: 'gateway', OB_BOOTSTRAP_ADMIN_KEY: adminKey, OB_BOOTSTRAP_DOMAIN: domain }, log: { level: 'info', stream }
  })
  return { ob, lines }
}

const liveKey = (tag: string): string => `ob_live_${tag}${'0'.repeat(24)}`.slice(0, 8 + 32)
const WARN = 40
/** Warnings about the bootstrap settings (other parts may warn about their own set-up, such as an unbuilt dashboard). */
const bootstrapWarnings = (lines: LogLine[]): LogLine[] => lines.filter((l) => l.level >= WARN && /bootstrap/i.test(l.msg))

test('a restart with a new bootstrap key and the same domain starts, and the new key administers org default', async () => {
  const domain = `boot${process.pid}.example.org`
  const first = await start(liveKey('first'), domain)
  const r1 = await first.ob.request('GET', '/v1/domains', { key: liveKey('first') })
  assert.equal(r1.status, 200)
  const domainId = (r1.body.data as Array<{ id: string, name: string }>).find((d) => d.name === domain)!.id
  await first.ob.close()

  const second = await start(liveKey('second'), domain)
  try {
    const r2 = await second.ob.request('GET', `/v1/domains/${domainId}`, { key: liveKey('second') })
    assert.equal(r2.status, 200, r2.text)
    const key = second.ob.proc.cp.keyByValue(liveKey('second'))!
    assert.equal(second.ob.proc.cp.orgs.get(key.org_id)?.name, 'default')
    assert.deepEqual(key.permissions, ['admin'])
    // the earlier key keeps working until it is revoked
    assert.equal((await second.ob.request('GET', `/v1/domains/${domainId}`, { key: liveKey('first') })).status, 200)
    assert.deepEqual(bootstrapWarnings(second.lines), [])
    assert.ok(second.lines.some((l) => /bootstrap admin key added/.test(l.msg)))
  } finally {
    await second.ob.close()
  }

  // a third start with the second key finds it and adds nothing
  const third = await start(liveKey('second'), domain)
  const keys = third.ob.proc.cp.apiKeys.list().filter((k) => k.name.startsWith('admin'))
  await third.ob.close()
  assert.equal(keys.length, 2)
})

test('a bootstrap domain held by another organisation: the start goes on with one warning and without the key', async () => {
  const setup = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway' } })
  const taken = await setup.org()
  await setup.close()

  const boot = await start(liveKey('other'), taken.domain)
  try {
    const warnings = bootstrapWarnings(boot.lines)
    assert.equal(warnings.length, 1, JSON.stringify(warnings))
    assert.match(warnings[0]!.msg, /OB_BOOTSTRAP_ADMIN_KEY/)
    assert.equal((await boot.ob.request('GET', '/v1/domains', { key: liveKey('other') })).status, 401)
    assert.equal((await boot.ob.request('GET', '/v1/domains', { key: taken.adminKey })).status, 200)
  } finally {
    await boot.ob.close()
  }
})
