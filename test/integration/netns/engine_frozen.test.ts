// test-group: multi-host — the engine is frozen for 30 s, past its 3 s lease and its messages' 6 s ack_wait
import { test } from 'node:test'
import { netnsUnavailable } from '../../helpers/netns/net.ts'
import { runEngineFault } from '../../helpers/netns/engine_fault.ts'

/**
 * An engine process is frozen with SIGSTOP for 30 s while mail flows (a stalled VM, a stop-the-world pause: its
 * sockets stay open, it runs nothing), then woken with SIGCONT. The two other engines take its shards and its
 * unacknowledged messages; woken, it must not deliver what they now own (helpers/netns/engine_fault.ts).
 */
test('an engine frozen past its lease: its shards move, nothing is lost, and woken it delivers nothing another engine owns',
  { skip: netnsUnavailable() }, async (t) => {
    await runEngineFault(t, {
      what: 'frozen with SIGSTOP',
      outageMs: 30_000,
      take: (_lab, victim) => { victim.freeze() },
      giveBack: (_lab, victim) => { victim.thaw() }
    })
  })
