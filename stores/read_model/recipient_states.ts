import type { Redis } from 'ioredis'
import { bareAddress, type MessageStatus } from '../../protocol/mod.ts'

/** One recipient of a message as GET /v1/messages/{id} shows it. */
export interface RecipientState {
  address: string
  status: MessageStatus
  /** Delivery attempts that ended (delivered, deferred, bounced or failed). */
  attempts: number
  /** Time of the latest event about this recipient; null before any. */
  last_event_at: string | null
}

/** The distinct recipients of a message (to, cc then bcc), bare and lower-cased, as events name them. */
export function recipientAddresses (m: { to: readonly string[], cc: readonly string[], bcc: readonly string[] }): string[] {
  return [...new Set([...m.to, ...m.cc, ...m.bcc].map(bareAddress))]
}

/**
 * Reads the per-recipient fields (`r:<address>` = `<status> <rank> <attempts> <last event ms>`, written by
 * apply_event.lua) of a message hash. A recipient with no outcome yet has the message's own status while that is
 * queued or scheduled, else `queued`.
 */
export async function recipientStates (
  redis: Redis, key: string, m: { to: readonly string[], cc: readonly string[], bcc: readonly string[], status: MessageStatus }
): Promise<RecipientState[]> {
  const addresses = recipientAddresses(m)
  if (addresses.length === 0) return []
  const fields = await redis.hmget(key, ...addresses.map((a) => `r:${a}`))
  const pending: MessageStatus = m.status === 'scheduled' ? 'scheduled' : 'queued'
  return addresses.map((address, i) => {
    const held = fields[i]
    if (held === null || held === undefined) return { address, status: pending, attempts: 0, last_event_at: null }
    const [status, rank, attempts, last] = held.split(' ')
    return {
      address,
      status: Number(rank) >= 0 ? status as MessageStatus : pending,
      attempts: Number(attempts),
      last_event_at: Number(last) > 0 ? new Date(Number(last)).toISOString() : null
    }
  })
}
