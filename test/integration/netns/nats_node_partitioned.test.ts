// test-group: multi-host — one NATS node is partitioned from the other two for 30 s, past the 3 s shard lease and 6 s ack_wait
import { test } from 'node:test'
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { netnsUnavailable } from '../../helpers/netns/net.ts'
import { openSessions, runFlowFault } from '../../helpers/netns/flow_fault.ts'
import { retrying } from '../../helpers/netns/lab.ts'
import { natsClients, natsUrl } from '../../helpers/netns/services.ts'
import type { Lab } from '../../helpers/netns/lab.ts'
import { eventually } from '../../helpers/waiting.ts'
import { STREAM_OUTBOUND } from '../../../protocol/mod.ts'

/**
 * Node n3 of the three-node cluster loses its routes to n1 and n2 for 30 s (blackhole routes on both sides) while
 * its clients still reach it: whichever gateway or engine is connected to n3 sits in the minority, where no
 * JetStream write can be acknowledged. The majority keeps the streams; sends through a gateway on n3 are refused
 * (never accepted and lost), an engine on n3 is fenced off its shards. Healed, n3 rejoins.
 *
 * Duplicates ≤ the SMTP sessions open at the sink when the partition began: a message sent by an engine in the
 * minority is recorded in Redis, which the minority still reaches, so the copy JetStream hands to the new owner
 * after ack_wait is skipped; only a transaction whose reply the fault can swallow is sent again.
 */
test('a NATS node partitioned from the other two, then healed: nothing accepted is lost', { skip: netnsUnavailable() }, async (t) => {
  // The stream's state is read through n1 and n2 only: the admin's own connection may be on n3, in the minority.
  let majority: NatsConnection | undefined
  const majorityJsm = async (lab: Lab): Promise<JetStreamManager> => {
    const servers = natsUrl([lab.net.host('n1'), lab.net.host('n2')]).split(',')
    majority ??= await retrying(async () => await connect({ servers, timeout: 2000 }))
    return await jetstreamManager(majority, { timeout: 2000 })
  }
  try {
    await runFlowFault(t, {
      what: 'n3 partitioned from n1 and n2',
      lab: { env: { OB_SHARD_LEASE_MS: '3000', OB_ENGINE_ACK_WAIT_MS: '6000' } },
      outageMs: 30_000,
      take: (lab) => { lab.net.partition('n3', ['n1', 'n2']) },
      during: async (lab, t) => {
      // which processes sit in the minority with n3: their JetStream writes wait for the partition to end
        const minority = await natsClients(lab.net.host('n3')).catch(() => [])
        const names = new Map([...lab.net.hosts.values()].map((h) => [h.address, h.name]))
        names.set(lab.net.rootAddress, 'root (admin)')
        t.diagnostic(`clients of n3: ${minority.map((a) => names.get(a) ?? a).join(', ') || 'none'}`)
        // the majority elects a leader for the outbound stream among n1 and n2
        const jsm = await retrying(async () => await majorityJsm(lab), 10)
        await eventually(async () => {
          const info = await jsm.streams.info(STREAM_OUTBOUND).catch(() => undefined)
          return info?.cluster?.leader !== undefined && info.cluster.leader !== 'n3'
        }, 'a leader of the outbound stream on the majority side', 30_000, 500)
      },
      giveBack: (lab) => { lab.net.unpartition('n3', ['n1', 'n2']) },
      after: async (lab) => {
        const jsm = await retrying(async () => await majorityJsm(lab), 10)
        await eventually(async () => {
          const info = await jsm.streams.info(STREAM_OUTBOUND).catch(() => undefined)
          return info?.cluster?.replicas?.length === 2 && info.cluster.replicas.every((r) => r.current) ? info : undefined
        }, 'n3 to catch up as a current replica of the outbound stream', 60_000, 500)
      },
      bound: (open) => openSessions(open)
    })
  } finally {
    await majority?.close().catch(() => {})
  }
})
