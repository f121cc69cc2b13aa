import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { eventually, nothingHappensFor, sleepUntil } from '../waiting.ts'
import { Lab } from './lab.ts'
import { MailFlow, type Tally } from './mail_flow.ts'
import type { HostProcess } from './host_process.ts'

/**
 * The engine scenarios (an engine host cut off, an engine frozen), one after the other on one lab
 * (`startEngineLab`): three engines share six shards with a 3 s lease and a 6 s ack_wait, mail flows through a
 * gateway the whole time, one engine is taken away for `outageMs` (far past its lease and its messages' ack_wait)
 * and given back. Then:
 *
 * - while it is away, the other two engines hold every shard, and it holds its share again after it is back;
 * - every accepted message reaches the sink (lost = 0);
 * - once it is back, the engine delivers no message another engine delivered: any copy of a message the sink got
 *   from two engines came from the returning engine before it was taken away (a transaction whose reply the
 *   fault swallowed, which the new owner sent again);
 * - duplicates ≤ its SMTP sessions open at the sink when it was taken away: each session carries one transaction
 *   at a time, and only a transaction in flight then can be accepted by the sink without the engine learning it.
 */
export const LEASE_MS = 3000
export const ACK_WAIT_MS = 6000

export interface EngineFault {
  /** What is done to the engine, and how it is undone. */
  take: (lab: Lab, victim: HostProcess) => void
  giveBack: (lab: Lab, victim: HostProcess) => void
  outageMs: number
  what: string
}

export interface EngineFaultFigures extends Tally { bound: number, victim: string }

/** Three engines and one gateway, the engines with the lease and ack_wait above. */
export async function startEngineLab (): Promise<Lab> {
  return await Lab.start({
    engines: 3, gateways: 1, env: { OB_SHARD_LEASE_MS: String(LEASE_MS), OB_ENGINE_ACK_WAIT_MS: String(ACK_WAIT_MS) }
  })
}

/**
 * Takes engine `victim` of `lab` away and back while mail flows, and checks the above. The lab is left as it was
 * found (every engine back with its share, no mail flowing), so a second fault can follow on it.
 */
export async function runEngineFault (t: TestContext, lab: Lab, victim: HostProcess, fault: EngineFault): Promise<EngineFaultFigures> {
  let flow: MailFlow | undefined
  try {
    const addrs = lab.engines.map((e) => e.host.address)
    const share = lab.shards / addrs.length
    await eventually(async () => {
      const o = await lab.shardOwners()
      return addrs.every((a) => o.filter((x) => x === a).length === share)
    }, 'the shards balanced over three engines', 30_000, 200)

    const va = victim.host.address
    const sink = lab.sink
    const deliveredBefore = sink.messages.filter((m) => m.remoteAddress === va).length
    flow = MailFlow.start(lab.gatewayUrls, lab.org, lab.key)
    await sink.until(() => sink.messages.filter((m) => m.remoteAddress === va).length >= deliveredBefore + 20, 60_000)

    const bound = sink.openByAddress.get(va) ?? 0
    const acceptedBefore = flow.accepted.length
    fault.take(lab, victim)
    const takenAt = Date.now()
    t.diagnostic(`${fault.what} (engine ${va}) after ${acceptedBefore} accepted; its sessions open at the sink: ${bound}`)

    const others = addrs.filter((a) => a !== va)
    await eventually(async () => {
      const o = await lab.shardOwners()
      return o.every((x) => x !== null && others.includes(x))
    }, 'the other engines to hold every shard', 30_000, 200)
    const movedAfter = Date.now() - takenAt
    await sleepUntil(takenAt + fault.outageMs)
    fault.giveBack(lab, victim)
    const backAt = Date.now()
    t.diagnostic(`shards moved ${movedAfter} ms after; given back after ${backAt - takenAt} ms`)

    await eventually(async () => (await lab.shardOwners()).filter((x) => x === va).length === share,
      'the returning engine to hold its share again', 60_000, 200)
    // mail keeps flowing through the rebalance, then stops
    await eventually(() => sink.messages.some((m) => m.remoteAddress === va && m.receivedAt > Date.now() - 2000),
      'the returning engine delivering again', 30_000, 200)
    await flow.stop()
    const ids = flow.accepted.map((o) => flow!.messageId(o.id!))
    await eventually(() => ids.every((id) => sink.messages.some((m) => m.messageId === id)) || undefined,
      () => `every accepted message at the sink; missing ${flow!.tally(sink).missing.length}`, 120_000, 200)
    await nothingHappensFor(3000) // a late copy of a message in flight would arrive by now

    const figures = { ...flow.tally(sink), bound, victim: va }
    t.diagnostic(`accepted ${figures.accepted}, delivered ${figures.delivered}, lost ${figures.lost}, ` +
      `duplicates ${figures.duplicates} (bound ${bound}); answers ${JSON.stringify(figures.statuses)}`)
    assert.equal(figures.lost, 0, `accepted messages not delivered: ${figures.missing.slice(0, 5).join(' ')}`)
    const mine = new Set(ids)
    for (const [id, list] of figures.copies) {
      if (list.length < 2 || !mine.has(id)) continue // the sink also holds the mail of a fault before this one
      const late = list.filter((m) => m.remoteAddress === va && m.receivedAt >= backAt)
      assert.ok(!(late.length > 0 && list.some((m) => m.remoteAddress !== va)),
        `${id} was delivered by engine ${va} after it was back although another engine delivered it: ` +
        list.map((m) => `${m.remoteAddress}@${m.receivedAt - takenAt}ms`).join(', '))
      assert.ok(list.some((m) => m.remoteAddress === va && m.receivedAt < backAt),
        `${id} was delivered twice without the engine that was taken away: ${list.map((m) => m.remoteAddress).join(', ')}`)
    }
    assert.ok(figures.duplicates <= bound, `${figures.duplicates} duplicates; at most ${bound} transactions were in flight`)
    return figures
  } finally {
    await flow?.stop()
  }
}
