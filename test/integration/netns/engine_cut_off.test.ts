// test-group: multi-host — the engine is cut off for 30 s, past its 3 s lease and its messages' 6 s ack_wait
import { test } from 'node:test'
import { netnsUnavailable } from '../../helpers/netns/net.ts'
import { runEngineFault } from '../../helpers/netns/engine_fault.ts'

/**
 * An engine's host is cut off from the network (its link down: the process runs on, its sockets stay open,
 * nothing crosses) for 30 s while mail flows, then its link comes back. The two other engines take its shards
 * and its unacknowledged messages; once back, it must not deliver what they now own (helpers/netns/engine_fault.ts).
 */
test('an engine host cut off past its lease: its shards move, nothing is lost, and back it delivers nothing another engine owns',
  { skip: netnsUnavailable() }, async (t) => {
    await runEngineFault(t, {
      what: 'cut off',
      outageMs: 30_000,
      take: (lab, victim) => { lab.net.cut(victim.host.name) },
      giveBack: (lab, victim) => { lab.net.heal(victim.host.name) }
    })
  })
