import { test } from 'node:test'
import assert from 'node:assert/strict'
import { gunzipSync } from 'node:zlib'
import { TestOutbox } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { TlsCounterBatch } from '../../../stores/tls_reports/mod.ts'

/**
 * The TLS report sender runs by itself every OB_TLSRPT_CHECK_MS on every engine, and a day's report still goes out
 * once (docs/delivery.md, "TLS reports"): two engines on one NATS and Redis, yesterday's counters, one POST.
 */
test('two engines checking every second send yesterday\'s report once', async () => {
  const nats = await ServerProcess.nats()
  const redis = await ServerProcess.redis()
  const rua = await HttpsReceiver.start()
  const dns = await DnsServer.start({ TXT: { '_smtp._tls.cluster-rpt.test': [`v=TLSRPTv1; rua=${rua.url('/tlsrpt')}`] } })
  const env = {
    OB_ROLE: 'engine', OB_DNS_SERVERS: dns.address, OB_SMTP_ALLOW_PRIVATE: 'true', OB_SMTP_CA_FILE: testCa().caFile,
    OB_TLSRPT_CHECK_MS: '1000'
  }
  const engines: TestOutbox[] = []
  try {
    engines.push(await TestOutbox.start({ nats, redis, env }))
    // yesterday's sessions with the domain, as a shard thread counts them
    const yesterday = new TlsCounterBatch(engines[0]!.proc.redis, () => Date.now() - 86_400_000)
    const policy = { type: 'sts' as const, strings: ['version: STSv1', 'mode: enforce', 'mx: mx.cluster-rpt.test', 'max_age: 86400'],
      mx: ['mx.cluster-rpt.test'] }
    for (let i = 0; i < 5; i++) yesterday.note('cluster-rpt.test', policy)
    await yesterday.flush()
    engines.push(await TestOutbox.start({ nats, redis, env }))
    const [report] = await rua.waitFor(1, { timeoutMs: 15_000 })
    const r = JSON.parse(gunzipSync(report!.rawBody).toString()) as { policies: Array<{ summary: Record<string, number> }> }
    assert.deepEqual(r.policies[0]!.summary, { 'total-successful-session-count': 5, 'total-failure-session-count': 0 })
    await new Promise((resolve) => setTimeout(resolve, 3000)) // three more checks on each engine
    assert.equal(rua.on('/tlsrpt').length, 1)
  } finally {
    for (const e of engines) await e.close()
    await rua.close()
    await dns.close()
    await nats.dispose()
    await redis.dispose()
  }
})
