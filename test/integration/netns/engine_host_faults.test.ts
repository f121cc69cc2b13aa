// test-group: multi-host — on one lab, an engine host cut off for 30 s, then another engine frozen for 30 s (3 s lease, 6 s ack_wait)
import { test } from 'node:test'
import { netnsUnavailable } from '../../helpers/netns/net.ts'
import { runEngineFault, startEngineLab } from '../../helpers/netns/engine_fault.ts'

/**
 * Two faults of an engine, one after the other on one installation of three engines (helpers/netns/engine_fault.ts):
 *
 * - engine e1's host is cut off from the network (its link down: the process runs on, its sockets stay open,
 *   nothing crosses) for 30 s while mail flows, then its link comes back;
 * - then engine e2 is frozen with SIGSTOP for 30 s while mail flows (a stalled VM, a stop-the-world pause: its
 *   sockets stay open, it runs nothing), then woken with SIGCONT.
 *
 * Each time the two other engines take its shards and its unacknowledged messages, and back, it must not deliver
 * what they now own.
 */
test('engines taken away past their lease, on one installation', { skip: netnsUnavailable() }, async (t) => {
  const lab = await startEngineLab()
  try {
    await t.test('an engine host cut off past its lease: its shards move, nothing is lost, and back it delivers nothing another owns',
      async (t) => {
        await runEngineFault(t, lab, lab.engines[0]!, {
          what: 'cut off',
          outageMs: 30_000,
          take: (lab, victim) => { lab.net.cut(victim.host.name) },
          giveBack: (lab, victim) => { lab.net.heal(victim.host.name) }
        })
      })
    await t.test('an engine frozen past its lease: its shards move, nothing is lost, and woken it delivers nothing another owns',
      async (t) => {
        await runEngineFault(t, lab, lab.engines[1]!, {
          what: 'frozen with SIGSTOP',
          outageMs: 30_000,
          take: (_lab, victim) => { victim.freeze() },
          giveBack: (_lab, victim) => { victim.thaw() }
        })
      })
  } finally {
    await lab.dispose()
  }
})
