// test-group: multi-host — the Redis master is cut off for 30 s (Sentinel fails over after 1 s), then comes back
import { test } from 'node:test'
import { netnsUnavailable } from '../../helpers/netns/net.ts'
import { openSessions, runFlowFault } from '../../helpers/netns/flow_fault.ts'
import { ask, REDIS_PORT, sentinelMasters } from '../../helpers/netns/services.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * The Redis master's host is cut off (from every client and every Sentinel) for 30 s while mail flows; the
 * Sentinels promote the replica and Outbox follows them while the old master is still cut off (its connections
 * to it do not close: nothing answers, nothing resets them), and the old master, back on the network, is turned
 * into a replica of the new one. Duplicates ≤ the SMTP sessions open at the sink when the cut began: only a transaction in flight then can
 * be accepted by the sink without its outcome being recorded.
 */
test('the Redis master partitioned from clients and Sentinels: failover, old master back as a replica, nothing accepted is lost',
  { skip: netnsUnavailable() }, async (t) => {
    await runFlowFault(t, {
      what: 'the Redis master (r1) cut off',
      lab: { sentinel: true, env: { OB_SHARD_LEASE_MS: '3000', OB_ENGINE_ACK_WAIT_MS: '6000' } },
      outageMs: 30_000,
      take: (lab) => { lab.net.cut('r1') },
      during: async (lab, t, flow) => {
        const replica = lab.net.host('r2').address
        const sentinels = ['s1', 's2', 's3'].map((n) => lab.net.host(n))
        const cutAt = Date.now()
        await eventually(async () => (await sentinelMasters(sentinels)).every((a) => a === replica),
          'the sentinels to promote the replica', 20_000, 200)
        const promotedAt = Date.now()
        // the old master is still cut off: Outbox must follow the sentinels to the new one, not wait for it
        await eventually(() => flow.accepted.filter((o) => o.at > promotedAt).length >= 10,
          'sends accepted through the promoted replica while the old master is cut off', 20_000, 200)
        t.diagnostic(`the sentinels named the replica master after ${promotedAt - cutAt} ms; ` +
          `sends accepted again ${Date.now() - promotedAt} ms later`)
      },
      giveBack: (lab) => { lab.net.heal('r1') },
      after: async (lab) => {
        const old = lab.net.host('r1').address
        await eventually(async () => /role:slave/.test(String(await ask(old, REDIS_PORT, 'INFO', 'replication') ?? '')),
          'the old master to become a replica of the new one', 60_000, 500)
      },
      bound: (open) => openSessions(open)
    })
  })
