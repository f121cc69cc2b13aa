import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { eventually, nothingHappensFor, sleepUntil } from '../waiting.ts'
import { Lab, type LabOptions } from './lab.ts'
import { MailFlow, type Tally } from './mail_flow.ts'
import { LimitProbe, type LimitFigures } from './limit_probe.ts'

/**
 * A fault on the installation's services (a NATS node, the Redis master, a gateway's link) while mail flows
 * through two gateways to three engines: the fault lasts `outageMs` and is undone, mail flows on until some is
 * accepted again, and then every accepted message must reach the sink (lost = 0) with at most `bound`
 * duplicates, where the bound is what the fault can cause (see each scenario).
 *
 * Beside the mail, a free-plan key is held at its per-key limit through both gateways (limit_probe.ts): from its
 * first 429 on it must get no more than its bucket allows (one request a second), fault or not, and the rate it
 * got while the fault lasted is reported against the plan's.
 */
export interface FlowFault {
  what: string
  lab?: LabOptions
  outageMs: number
  take: (lab: Lab) => void
  /** Checks while the fault lasts (a failover happened, say); runs right after `take`. */
  during?: (lab: Lab, t: TestContext, flow: MailFlow) => Promise<void>
  giveBack: (lab: Lab) => void
  /** Checks once the fault is undone (the old master follows the new one, say). */
  after?: (lab: Lab, t: TestContext) => Promise<void>
  /** The most duplicates the fault may cause, from the sink's open sessions per client address when it began. */
  bound: (openAtFault: Map<string, number>, lab: Lab) => number
  /** Where the client sends (default each gateway's own address). */
  gatewayUrls?: (lab: Lab) => string[]
}

export async function runFlowFault (t: TestContext, fault: FlowFault): Promise<Tally & { bound: number, limit: LimitFigures }> {
  const lab = await Lab.start({ engines: 3, gateways: 2, ...fault.lab })
  let flow: MailFlow | undefined
  let probe: LimitProbe | undefined
  try {
    await eventually(async () => (await lab.shardOwners()).every((o) => o !== null), 'every shard leased', 30_000, 200)
    const urls = fault.gatewayUrls?.(lab) ?? lab.gatewayUrls
    probe = await LimitProbe.start(lab, urls)
    flow = MailFlow.start(urls, lab.org, lab.key)
    const sink = lab.sink
    await sink.until(() => sink.messages.length >= 30, 60_000)
    await probe.untilLimited()

    const bound = fault.bound(new Map(sink.openByAddress), lab)
    const acceptedBefore = flow.accepted.length
    fault.take(lab)
    const takenAt = Date.now()
    t.diagnostic(`${fault.what} after ${acceptedBefore} accepted`)
    await fault.during?.(lab, t, flow)
    await sleepUntil(takenAt + fault.outageMs)
    fault.giveBack(lab)
    const backAt = Date.now()
    const during = flow.accepted.filter((o) => o.at > takenAt && o.at <= backAt)
    const perGateway = Object.fromEntries(urls.map((g) => [g, during.filter((o) => o.gateway === g).length]))
    t.diagnostic(`undone after ${backAt - takenAt} ms; accepted meanwhile ${JSON.stringify(perGateway)}`)
    await fault.after?.(lab, t)

    await eventually(() => flow!.accepted.filter((o) => o.at > backAt).length >= 20, 'sends accepted again', 90_000, 200)
    await flow.stop()
    await probe.stop()
    const limit = probe.figures(takenAt, backAt)
    t.diagnostic(`limited key (${limit.perMinute}/min) through ${urls.length} gateway(s): ${limit.inWindow} allowed in the ` +
      `${limit.windowMs} ms of the fault, ${limit.windowPerMinute.toFixed(1)}/min (${limit.deviationPct.toFixed(1)} %); ` +
      `${limit.allowed} allowed once at its limit, the bucket allows ${limit.allowance}; answers ${JSON.stringify(limit.statuses)}`)
    assert.ok(limit.allowed <= limit.allowance,
      `the limited key got ${limit.allowed} requests through; its bucket allows ${limit.allowance}`)
    const ids = flow.accepted.map((o) => flow!.messageId(o.id!))
    await eventually(() => ids.every((id) => sink.messages.some((m) => m.messageId === id)) || undefined,
      () => `every accepted message at the sink; missing ${flow!.tally(sink).missing.length}`, 120_000, 200)
    await nothingHappensFor(3000) // a late copy of a message in flight would arrive by now

    const figures = { ...flow.tally(sink), bound, limit }
    t.diagnostic(`accepted ${figures.accepted}, delivered ${figures.delivered}, lost ${figures.lost}, ` +
      `duplicates ${figures.duplicates} (bound ${bound}); answers ${JSON.stringify(figures.statuses)}`)
    assert.equal(figures.lost, 0, `accepted messages not delivered: ${figures.missing.slice(0, 5).join(' ')}`)
    assert.ok(figures.duplicates <= bound, `${figures.duplicates} duplicates; the bound is ${bound}`)
    return figures
  } finally {
    await flow?.stop()
    await probe?.stop()
    await lab.dispose()
  }
}

/** Every SMTP session open at the sink when the fault began: each carries at most one transaction in flight. */
export function openSessions (open: Map<string, number>): number {
  let n = 0
  for (const v of open.values()) n += v
  return n
}
