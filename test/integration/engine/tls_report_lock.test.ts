import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { pino } from 'pino'
import { TlsReporter, LOCK_MS } from '../../../engine/tls/tls_reporter.ts'
import { TLS_REPORT_LOCK_KEY, TlsReportStore } from '../../../stores/tls_reports/mod.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import { countYesterday } from '../../helpers/tls_reports.ts'

/**
 * The TLS report sender's lock (docs/delivery.md, "TLS reports") is renewed before each domain's report: a run whose
 * lock ran out keeps going while nobody took it, and stops, leaving the rest to the other engine, once another has.
 */
const own = useOwnRedis()

test('the run renews its lock per domain, takes back one that ran out, and stops once another engine holds it', async () => {
  const domains = ['a.lock.test', 'b.lock.test', 'c.lock.test']
  const rua = await HttpsReceiver.start()
  const dns = await DnsServer.start({
    TXT: Object.fromEntries(domains.map((d) => [`_smtp._tls.${d}`, [`v=TLSRPTv1; rua=${rua.url(`/${d}`)}`]]))
  })
  const redis = own.redis
  let heldAtSecond: { holder: string | null, ttl: number } | undefined
  rua.script = (_req, n) => {
    if (n === 0) return { until: redis.del(TLS_REPORT_LOCK_KEY) } // the lock runs out during the first report
    if (n === 1) {
      return {
        until: (async () => {
          heldAtSecond = { holder: await redis.get(TLS_REPORT_LOCK_KEY), ttl: await redis.pttl(TLS_REPORT_LOCK_KEY) }
          await redis.set(TLS_REPORT_LOCK_KEY, 'another-engine', 'PX', 60_000) // and another engine takes it
        })()
      }
    }
    return { status: 200 }
  }
  try {
    for (const d of domains) await countYesterday(redis, d, 1)
    const store = new TlsReportStore(redis)
    const reporter = new TlsReporter({
      store,
      dnsServers: [dns.address],
      allowPrivate: true,
      ca: [readFileSync(testCa().caFile, 'utf8')],
      organization: 'outbox.example',
      contact: 'postmaster@outbox.example',
      log: pino({ level: 'silent' })
    })
    const run = await reporter.run()
    assert.equal(run.locked, true)
    assert.equal(run.lost, true)
    assert.deepEqual(run.sent.map((s) => s.domain), domains.slice(0, 2))
    // the second report went under the run's lock again, taken back for a whole LOCK_MS
    assert.notEqual(heldAtSecond?.holder, null)
    assert.notEqual(heldAtSecond?.holder, 'another-engine')
    assert.ok(heldAtSecond!.ttl > LOCK_MS - 60_000, `lock left ${heldAtSecond!.ttl} ms`)
    // the third is left to the engine that holds the lock now: not sent, not marked sent, and its lock kept
    assert.deepEqual(rua.requests.map((r) => r.path), domains.slice(0, 2).map((d) => `/${d}`))
    const day = run.sent[0]!.day
    assert.equal(await store.isSent(day, 'c.lock.test'), false)
    assert.equal(await store.isSent(day, 'b.lock.test'), true)
    assert.equal(await redis.get(TLS_REPORT_LOCK_KEY), 'another-engine')
  } finally {
    await rua.close()
    await dns.close()
  }
})
