import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import { clientIdentity } from '../protocol/mod.ts'
import type { InboundQuota, OutboxMetrics } from '../stores/metrics/mod.ts'

/** A quota check or count that Redis does not answer within this long lets the mail through (logged): mail is not refused for it. */
const CHECK_TIMEOUT_MS = 1000

/**
 * Fixed windows of `windowS`, counted in Redis so every inbound process shares them. Each route and each sending
 * client address (an IPv6 client by its /64) has one hash per window, `ob:inq:<r|s>:<id>:<window>` with fields `m`
 * (messages) and `b` (bytes), kept two windows. This module is the only writer of those keys.
 */
const key = (kind: 'r' | 's', id: string, window: number): string => `ob:inq:${kind}:${id}:${window}`

/**
 * The inbound quotas, answered at SMTP time as MTAs do: a route past its messages or bytes for the window makes its
 * recipients `452` (the sender keeps the mail and retries later); a sending address past its own makes its next
 * `MAIL FROM` a `421` that closes the connection. A message counts once it is stored, before its 250: for each route
 * among its recipients, and for the address it came from. Sessions running side by side can each pass a check before
 * either counts, so a quota may be passed by the messages in flight at that moment.
 */
export class InboundQuotas {
  private readonly q: Config['inbound']['quota']

  constructor (config: Config, private readonly redis: Redis, private readonly metrics: OutboxMetrics, private readonly log: Logger) {
    this.q = config.inbound.quota
  }

  private window (): number {
    return Math.floor(Date.now() / (this.q.windowS * 1000))
  }

  /** Which of `limits` the hash at `k` has reached, or undefined; undefined too when Redis does not answer in time. */
  private async over (k: string, messages: number, bytes: number, names: [InboundQuota, InboundQuota]): Promise<InboundQuota | undefined> {
    if (messages === 0 && bytes === 0) return undefined
    let timer: NodeJS.Timeout | undefined
    try {
      const read = this.redis.hmget(k, 'm', 'b')
      const late = new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), CHECK_TIMEOUT_MS) })
      const got = await Promise.race([read, late])
      if (got === null) {
        read.catch(() => {})
        this.log.warn({ key: k }, 'inbound quota not checked: Redis did not answer in time; the mail is let through')
        return undefined
      }
      const [m, b] = got.map((v) => Number(v ?? 0))
      const hit = messages > 0 && m! >= messages ? names[0] : bytes > 0 && b! >= bytes ? names[1] : undefined
      if (hit !== undefined) this.metrics.inboundQuotaRefusals[hit].inc()
      return hit
    } catch (err) {
      this.log.warn({ err, key: k }, 'inbound quota not checked: Redis failed; the mail is let through')
      return undefined
    } finally {
      clearTimeout(timer)
    }
  }

  /** At `MAIL FROM`: whether the client address has used up its quota of the window. */
  async senderOver (remoteAddress: string): Promise<InboundQuota | undefined> {
    const client = clientIdentity(remoteAddress) ?? remoteAddress
    return await this.over(key('s', client, this.window()), this.q.senderMessages, this.q.senderBytes, ['sender_messages', 'sender_bytes'])
  }

  /** At `RCPT TO`: whether any of the recipient's routes has used up its quota of the window. */
  async routeOver (routeIds: readonly string[]): Promise<InboundQuota | undefined> {
    const w = this.window()
    for (const id of routeIds) {
      const hit = await this.over(key('r', id, w), this.q.routeMessages, this.q.routeBytes, ['route_messages', 'route_bytes'])
      if (hit !== undefined) return hit
    }
    return undefined
  }

  /** Once a message is stored: one message of `bytes` for each route and for the sending address. Never throws. */
  async count (remoteAddress: string, routeIds: ReadonlySet<string>, bytes: number): Promise<void> {
    const w = this.window()
    const ttlMs = 2 * this.q.windowS * 1000
    const p = this.redis.pipeline()
    const keys: string[] = []
    if (this.q.senderMessages > 0 || this.q.senderBytes > 0) keys.push(key('s', clientIdentity(remoteAddress) ?? remoteAddress, w))
    if (this.q.routeMessages > 0 || this.q.routeBytes > 0) for (const id of routeIds) keys.push(key('r', id, w))
    if (keys.length === 0) return
    for (const k of keys) p.hincrby(k, 'm', 1).hincrby(k, 'b', bytes).pexpire(k, ttlMs)
    // The reply waits for this; a Redis that does not answer in time leaves the message uncounted, not unanswered.
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), CHECK_TIMEOUT_MS) })
    const done = await Promise.race([p.exec().then(() => 'counted' as const, (err: unknown) => err), late])
    clearTimeout(timer)
    if (done !== 'counted') {
      this.log.warn({ err: done === 'late' ? undefined : done }, 'inbound quota not counted: Redis failed or did not answer in time')
    }
  }
}
