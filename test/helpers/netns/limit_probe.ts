import { Agent, fetch } from 'undici'
import { PLAN_RATE_LIMITS } from '../../../protocol/mod.ts'
import { eventually } from '../waiting.ts'
import { retrying, type Lab } from './lab.ts'

/**
 * A free-plan key (60 requests a minute, burst 60) held at its limit through a fault: one loop asks
 * `GET /v1/whoami` through the gateways in turn, one request at a time 50 ms apart (about ten a second) — far above the
 * limit, so once the burst is spent every token the bucket gains is taken at once. The gateways keep the bucket in
 * Redis (one GCRA per key, shared by all of them), so the 200s the key gets show how far the limit strays while the
 * fault lasts: more than one a second means a bucket lost or kept twice, fewer means requests refused for want of
 * Redis (503).
 */
export interface ProbeAnswer { status: number, sentAt: number, at: number, gateway: string }

export interface LimitFigures {
  perMinute: number
  /** 200s once the key was held at its limit (after its first 429), and the most GCRA allows in that time. */
  allowed: number
  allowance: number
  /** 200s to requests sent and answered within the window, and the rate they make against the plan's. */
  inWindow: number
  windowMs: number
  windowPerMinute: number
  /** (windowPerMinute − perMinute) / perMinute, in per cent. */
  deviationPct: number
  statuses: Record<string, number>
}

const PAUSE_MS = 50

export class LimitProbe {
  readonly answers: ProbeAnswer[] = []
  readonly perMinute = PLAN_RATE_LIMITS.free
  private stopped = false
  private loop?: Promise<void>
  private readonly agent = new Agent({ keepAliveTimeout: 1000, connect: { timeout: 5000 } })

  private constructor (private readonly gateways: string[], private readonly key: string) {}

  /** Starts asking through `gateways` with a read key of a new free-plan organisation. */
  static async start (lab: Lab, gateways: string[]): Promise<LimitProbe> {
    const org = await retrying(async () => await lab.admin.org('free'))
    const key = await retrying(async () => await lab.admin.key(org, ['read']))
    const p = new LimitProbe(gateways, key)
    p.loop = p.run()
    return p
  }

  private async run (): Promise<void> {
    let turn = 0
    while (!this.stopped) {
      const gateway = this.gateways[turn++ % this.gateways.length]!
      const sentAt = Date.now()
      let status = 0 // no answer
      try {
        const res = await fetch(`${gateway}/v1/whoami`, {
          headers: { authorization: `Bearer ${this.key}` }, dispatcher: this.agent, signal: AbortSignal.timeout(10_000)
        })
        await res.arrayBuffer()
        status = res.status
      } catch { /* counted as no answer */ }
      this.answers.push({ status, sentAt, at: Date.now(), gateway })
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS))
    }
  }

  /**
   * The first refusal of the key by its own limit: a 429 after its first 200 (before that, while the gateways have
   * not yet learnt the new key, a 429 is the failed-authentication throttle's, which never refuses a valid key).
   */
  private firstLimited (): ProbeAnswer | undefined {
    const first200 = this.answers.findIndex((a) => a.status === 200)
    return first200 === -1 ? undefined : this.answers.slice(first200).find((a) => a.status === 429)
  }

  /** Resolves once the key has spent its burst and is refused (429). */
  async untilLimited (): Promise<void> {
    await eventually(() => this.firstLimited(), 'the probe key to be held at its limit', 60_000, 200)
  }

  async stop (): Promise<void> {
    this.stopped = true
    await this.loop
    await this.agent.close().catch(() => {})
  }

  /**
   * The figures for a window [from, to] (the fault). GCRA: at its first 429 the bucket held less than one
   * token, and it gains one every 60/perMinute s, so from then on at most ⌊elapsed / interval⌋ + 1 requests pass.
   */
  figures (from: number, to: number): LimitFigures {
    const intervalMs = 60_000 / this.perMinute
    const first429 = this.firstLimited()
    const after = first429 === undefined ? [] : this.answers.filter((a) => a.sentAt > first429.at)
    const last = this.answers.at(-1)
    const allowance = first429 === undefined || last === undefined ? Infinity : Math.floor((last.at - first429.sentAt) / intervalMs) + 1
    const inWindow = this.answers.filter((a) => a.status === 200 && a.sentAt >= from && a.at <= to).length
    const windowMs = to - from
    const windowPerMinute = inWindow * 60_000 / windowMs
    const statuses: Record<string, number> = {}
    for (const a of this.answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1
    return {
      perMinute: this.perMinute,
      allowed: after.filter((a) => a.status === 200).length,
      allowance,
      inWindow,
      windowMs,
      windowPerMinute,
      deviationPct: (windowPerMinute - this.perMinute) * 100 / this.perMinute,
      statuses
    }
  }
}
