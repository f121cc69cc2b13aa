import { Agent, fetch } from 'undici'
import type { SmtpSink, SinkMessage } from '../smtp_sink.ts'
import type { TestOrg } from '../outbox.ts'

/**
 * Mail flowing through the gateways for the whole of a fault scenario: `senders` loops, each posting one send at
 * a time to the gateways in turn and pausing `pauseMs` between sends. Every answer is kept; a 202 is an accepted
 * message, which must reach the sink. `tally` compares the two by Message-ID (`<id@domain>`).
 */
export interface SendOutcome { status: number, id?: string, at: number, gateway: string }

export interface Tally {
  accepted: number
  delivered: number
  lost: number
  /** Copies at the sink beyond the first of an accepted message. */
  duplicates: number
  /** Accepted ids whose message has not reached the sink. */
  missing: string[]
  /** Message-ID → every copy the sink accepted, in order. */
  copies: Map<string, SinkMessage[]>
  /** Status → count of every answer the senders got. */
  statuses: Record<string, number>
}

export class MailFlow {
  readonly outcomes: SendOutcome[] = []
  private stopped = false
  private readonly loops: Array<Promise<void>>
  private readonly agent = new Agent({ keepAliveTimeout: 1000, connect: { timeout: 5000 } })
  private n = 0

  private constructor (
    private readonly gateways: string[], private readonly org: TestOrg, private readonly key: string,
    senders: number, private readonly pauseMs: number, private readonly slowEvery: number
  ) {
    this.loops = Array.from({ length: senders }, async (_v, i) => { await this.loop(i) })
  }

  /** `slowEvery`: every n-th recipient is `slow…`, whose DATA reply the sink holds back, so transactions are in flight. */
  static start (
    gateways: string[], org: TestOrg, key: string, opts: { senders?: number, pauseMs?: number, slowEvery?: number } = {}
  ): MailFlow {
    return new MailFlow(gateways, org, key, opts.senders ?? 2, opts.pauseMs ?? 100, opts.slowEvery ?? 4)
  }

  private async loop (i: number): Promise<void> {
    let turn = i
    while (!this.stopped) {
      const gateway = this.gateways[turn++ % this.gateways.length]!
      this.outcomes.push(await this.send(gateway))
      await new Promise((resolve) => setTimeout(resolve, this.pauseMs))
    }
  }

  private async send (gateway: string): Promise<SendOutcome> {
    const i = this.n++
    const to = i % this.slowEvery === 0 ? `slow${i}@dest.example` : `r${i}@dest.example`
    const body = JSON.stringify({ from: `App <hello@${this.org.domain}>`, to, subject: `Hello ${i}`, text: 'Hi' })
    try {
      const res = await fetch(`${gateway}/v1/messages/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.key}`, 'content-type': 'application/json' },
        body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(15_000)
      })
      const parsed = await res.json().catch(() => undefined) as { id?: string } | undefined
      return { status: res.status, ...(res.status === 202 && parsed?.id !== undefined ? { id: parsed.id } : {}), at: Date.now(), gateway }
    } catch {
      return { status: 0, at: Date.now(), gateway } // no answer: not accepted
    }
  }

  get accepted (): SendOutcome[] {
    return this.outcomes.filter((o) => o.id !== undefined)
  }

  async stop (): Promise<void> {
    this.stopped = true
    await Promise.all(this.loops)
    await this.agent.close().catch(() => {})
  }

  /** The Message-ID the engine gives accepted message `id`. */
  messageId (id: string): string {
    return `<${id}@${this.org.domain}>`
  }

  tally (sink: SmtpSink): Tally {
    const copies = new Map<string, SinkMessage[]>()
    for (const m of sink.messages) {
      const list = copies.get(m.messageId)
      if (list === undefined) copies.set(m.messageId, [m])
      else list.push(m)
    }
    const ids = this.accepted.map((o) => this.messageId(o.id!))
    const missing = ids.filter((id) => !copies.has(id))
    let duplicates = 0
    for (const id of ids) duplicates += Math.max(0, (copies.get(id)?.length ?? 0) - 1)
    const statuses: Record<string, number> = {}
    for (const o of this.outcomes) statuses[o.status] = (statuses[o.status] ?? 0) + 1
    return { accepted: ids.length, delivered: ids.length - missing.length, lost: missing.length, duplicates, missing, copies, statuses }
  }
}
