// test-group: multi-host — a third engine host joins while mail flows, then one engine is drained with SIGTERM
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { netnsUnavailable } from '../../helpers/netns/net.ts'
import { Lab } from '../../helpers/netns/lab.ts'
import { LeaseLog } from '../../helpers/netns/lease_log.ts'
import { MailFlow } from '../../helpers/netns/mail_flow.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'

const LEASE_MS = 3000
const ACK_WAIT_MS = 6000
/** How long the sink holds its reply to a `slow…` recipient's DATA (the lab's default). */
const SLOW_MS = 1500

/**
 * Scaling engines while mail flows, on one lab: two engines share six shards (three each) with a 3 s lease; a
 * third engine host joins, and the two give up one shard each to it (drained first, then the lease deleted), so
 * it holds its share of two; then the first engine is sent SIGTERM, drains, deletes its leases and exits, and the
 * two left take its shards at once, without waiting for the leases to expire. The lease bucket's own log
 * (helpers/netns/lease_log.ts) shows how each shard moved: every one was deleted by its holder before the other
 * engine wrote it.
 *
 * Every accepted message reaches the sink. Duplicates ≤ the drained engine's SMTP sessions open at the sink while
 * it drained: its shards' messages in hand finish within the shutdown timeout (2 s, more than the sink's 1.5 s
 * hold), and only a transaction cut at its exit could be accepted by the sink without the engine learning it;
 * a shard given up to the newcomer finishes what it holds before its lease is deleted.
 */
test('engines scale out and in under load: a new host gets its share, a drained engine hands its shards over at once, nothing is lost',
  { skip: netnsUnavailable() }, async (t) => {
    const lab = await Lab.start({
      engines: 2, gateways: 1, slowMs: SLOW_MS, env: { OB_SHARD_LEASE_MS: String(LEASE_MS), OB_ENGINE_ACK_WAIT_MS: String(ACK_WAIT_MS) }
    })
    let flow: MailFlow | undefined
    let log: LeaseLog | undefined
    try {
      const sink = lab.sink
      const holding = async (addrs: string[], share: number): Promise<boolean> => {
        const o = await lab.shardOwners()
        return addrs.every((a) => o.filter((x) => x === a).length === share)
      }
      const [e1, e2] = lab.engines.map((e) => e.host.address) as [string, string]
      await eventually(async () => await holding([e1, e2], 3), 'the shards balanced over two engines', 30_000, 200)
      log = await LeaseLog.start(lab)
      flow = MailFlow.start(lab.gatewayUrls, lab.org, lab.key)
      await sink.until(() => sink.messages.length >= 20, 60_000)

      // scale out: a third engine on a host of its own
      const addAt = Date.now()
      const e3 = (await lab.addEngine(lab.net.addHost('e3', 43))).host.address
      const readyAt = Date.now()
      await eventually(async () => await holding([e1, e2, e3], 2), 'the new engine to hold its share of two', 30_000, 100)
      const sharedAt = Date.now()
      const joined = (await lab.shardOwners()).flatMap((o, s) => o === e3 ? [s] : [])
      const joinMoves = joined.map((s) => log!.howMoved(s, e3, addAt))
      // its claim of a shard is its first write of it; later ones are renewals
      const lastClaim = Math.max(...joined.map((s) => log!.of(s, addAt)
        .find((c) => c.op === 'PUT' && c.owner !== undefined && lab.ownerAddress(c.owner) === e3)?.at ?? NaN))
      t.diagnostic(`engine ${e3} started in ${readyAt - addAt} ms; it held its share (shards ${joined.join(', ')}) ` +
        `${sharedAt - readyAt} ms after it was ready (its last claim stored ${lastClaim - readyAt} ms after); ` +
        `after ${flow.accepted.length} accepted`)
      assert.deepEqual(joinMoves, joined.map(() => 'handed over'), 'each shard of the new engine was released by its holder first')
      await eventually(() => sink.messages.filter((m) => m.remoteAddress === e3).length >= 5, 'the new engine delivering', 30_000, 200)

      // scale in: SIGTERM to the first engine while it works
      const victim = lab.engines[0]!
      const held = (await lab.shardOwners()).flatMap((o, s) => o === e1 ? [s] : [])
      let bound = sink.openByAddress.get(e1) ?? 0
      const termAt = Date.now()
      let exitAt = 0
      const exited = victim.stop('SIGTERM').then(() => { exitAt = Date.now() })
      // its sessions open while it drains: any of them may carry a transaction its exit cuts
      while (exitAt === 0) {
        bound = Math.max(bound, sink.openByAddress.get(e1) ?? 0)
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20))])
      }
      await eventually(async () => await holding([e2, e3], 3), 'the two engines left to hold every shard', 30_000, 100)
      const movedAt = Date.now()
      const moves = held.map((s) => {
        const to = log!.of(s, termAt).filter((c) => c.op === 'PUT').at(-1)?.owner
        return to === undefined ? 'not moved' : log!.howMoved(s, lab.ownerAddress(to), termAt)
      })
      const released = held.map((s) => log!.of(s, termAt).find((c) => c.op === 'DEL')?.at ?? NaN)
      // a survivor's claim is its first write after the delete; later ones are renewals
      const claimed = held.map((s) => {
        const list = log!.of(s, termAt)
        return list.slice(list.findIndex((c) => c.op === 'DEL')).find((c) => c.op === 'PUT')?.at ?? NaN
      })
      t.diagnostic(`SIGTERM to ${e1} holding shards ${held.join(', ')}: leases deleted ${Math.max(...released) - termAt} ms after, ` +
        `exited after ${exitAt - termAt} ms, the others held every shard ${movedAt - termAt} ms after ` +
        `(last claim stored ${Math.max(...claimed) - termAt} ms after); its sessions open at the sink while draining: ${bound}`)
      assert.deepEqual(moves, held.map(() => 'handed over'), 'each shard of the drained engine was deleted by it before another took it')

      await eventually(() => flow!.accepted.filter((o) => o.at > exitAt).length >= 20, 'sends accepted after the drain', 60_000, 200)
      await flow.stop()
      const ids = flow.accepted.map((o) => flow!.messageId(o.id!))
      await eventually(() => ids.every((id) => sink.messages.some((m) => m.messageId === id)) || undefined,
        () => `every accepted message at the sink; missing ${flow!.tally(sink).missing.length}`, 120_000, 200)
      await nothingHappensFor(3000) // a late copy of a message in flight would arrive by now

      const figures = flow.tally(sink)
      const by = (a: string): number => sink.messages.filter((m) => m.remoteAddress === a).length
      t.diagnostic(`accepted ${figures.accepted}, delivered ${figures.delivered}, lost ${figures.lost}, ` +
        `duplicates ${figures.duplicates} (bound ${bound}); delivered by e1 ${by(e1)}, e2 ${by(e2)}, e3 ${by(e3)}; ` +
        `answers ${JSON.stringify(figures.statuses)}`)
      assert.equal(figures.lost, 0, `accepted messages not delivered: ${figures.missing.slice(0, 5).join(' ')}`)
      for (const [id, list] of figures.copies) {
        if (list.length < 2) continue
        // a copy whose reply the exit cut: the sink had the data at most its hold before the SIGTERM
        assert.ok(list.some((m) => m.remoteAddress === e1 && m.receivedAt >= termAt - SLOW_MS),
          `${id} was delivered twice without the drained engine cut short: ` +
          list.map((m) => `${m.remoteAddress}@${m.receivedAt - termAt}ms`).join(', '))
      }
      assert.ok(figures.duplicates <= bound, `${figures.duplicates} duplicates; at most ${bound} transactions were in flight at the exit`)
    } finally {
      await flow?.stop()
      await log?.stop()
      await lab.dispose()
    }
  })
