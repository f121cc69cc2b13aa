import type { Redis } from 'ioredis'
import type { EventRecord } from './protocol/events.ts'
import type { RecipientResult } from './actor/task.ts'

/**
 * Per-recipient progress of one message, in the Redis hash `ob:done:<msg_id>` (7 days), so a redelivered
 * JetStream message never sends twice to a recipient that already has a final outcome:
 *   s:<rcpt>  the final SMTP reply (RecipientResult JSON), written by the shard thread as soon as it arrives
 *   d:<rcpt>  the recipient's final events (JSON array)  — set before those events are published
 *   p:<rcpt>  "1" once those events were published      — a redelivery re-publishes them when missing
 *   a:<rcpt>  attempts that ended deferred
 *   n:<rcpt>  not before (epoch ms): the next attempt's time (retry schedule or destination throttle)
 */
export const DELIVERY_STATE_TTL_S = 7 * 24 * 3600

export function deliveryStateKey (messageId: string): string {
  return `ob:done:${messageId}`
}

export interface RecipientState {
  /** A final SMTP reply recorded by the thread whose events were not yet written (crash in between). */
  sent?: RecipientResult
  final?: EventRecord[]
  published: boolean
  attempts: number
  notBefore: number
}

export class DeliveryState {
  constructor (private readonly redis: Redis) {}

  async load (messageId: string): Promise<Map<string, RecipientState>> {
    const raw = await this.redis.hgetall(deliveryStateKey(messageId))
    const out = new Map<string, RecipientState>()
    const get = (rcpt: string): RecipientState => {
      let s = out.get(rcpt)
      if (s === undefined) out.set(rcpt, s = { published: false, attempts: 0, notBefore: 0 })
      return s
    }
    for (const [field, value] of Object.entries(raw)) {
      const rcpt = field.slice(2)
      switch (field.slice(0, 2)) {
        case 's:': get(rcpt).sent = JSON.parse(value) as RecipientResult; break
        case 'd:': get(rcpt).final = JSON.parse(value) as EventRecord[]; break
        case 'p:': get(rcpt).published = true; break
        case 'a:': get(rcpt).attempts = Number(value); break
        case 'n:': get(rcpt).notBefore = Number(value); break
      }
    }
    return out
  }

  /** Writes fields (`d:…`, `a:…`, `n:…`) in one round trip and renews the expiry. */
  async save (messageId: string, fields: Record<string, string>): Promise<void> {
    if (Object.keys(fields).length === 0) return
    const key = deliveryStateKey(messageId)
    await this.redis.multi().hset(key, fields).expire(key, DELIVERY_STATE_TTL_S).exec()
  }

  async markPublished (messageId: string, recipients: readonly string[]): Promise<void> {
    if (recipients.length === 0) return
    const fields: Record<string, string> = {}
    for (const r of recipients) fields[`p:${r}`] = '1'
    await this.redis.hset(deliveryStateKey(messageId), fields)
  }
}
