import type { Redis } from 'ioredis'
import { bareAddress, type RecipientStatus } from '../../protocol/mod.ts'

/** One recipient of a message as GET /v1/messages/{id} shows it. */
export interface RecipientState {
  address: string
  status: RecipientStatus
  /** Delivery attempts that ended (delivered, deferred, bounced or failed). */
  attempts: number
  /** Time of the latest event about this recipient; null before any. */
  last_event_at: string | null
  /** Why a `suppressed` recipient is on the suppression list (hard_bounce, complaint, unsubscribe, manual). */
  reason?: string
}

/** A recipient skipped at the send because it is suppressed, as the message's summary keeps it. */
export interface SuppressedRecipient { address: string, reason?: string }

/** The distinct recipients of a message (to, cc then bcc), bare and lower-cased, as events name them. */
export function recipientAddresses (m: { to: readonly string[], cc: readonly string[], bcc: readonly string[] }): string[] {
  return [...new Set([...m.to, ...m.cc, ...m.bcc].map(bareAddress))]
}

/** The distinct recipients a send skipped as suppressed, with the list's reason when the message carries it. */
export function suppressedRecipients (
  m: { suppressed?: readonly string[], suppressed_reasons?: readonly string[] }
): SuppressedRecipient[] {
  const seen = new Set<string>()
  const out: SuppressedRecipient[] = []
  m.suppressed?.forEach((a, i) => {
    const address = bareAddress(a)
    if (seen.has(address)) return
    seen.add(address)
    const reason = m.suppressed_reasons?.[i]
    out.push(reason === undefined ? { address } : { address, reason })
  })
  return out
}

/**
 * Reads the per-recipient fields (`r:<address>` = `<status> <rank> <attempts> <last event ms>`, written by
 * apply_event.lua) of a message hash. A recipient with no outcome yet has the message's own status while that is
 * queued or scheduled, else `queued`. Recipients skipped as suppressed come last, `suppressed` with their reason.
 */
export async function recipientStates (
  redis: Redis, key: string,
  m: { to: readonly string[], cc: readonly string[], bcc: readonly string[], status: string },
  suppressed: readonly SuppressedRecipient[] = []
): Promise<RecipientState[]> {
  const skipped = suppressed.map((s): RecipientState => ({
    address: s.address, status: 'suppressed', attempts: 0, last_event_at: null, ...(s.reason !== undefined ? { reason: s.reason } : {})
  }))
  const addresses = recipientAddresses(m)
  if (addresses.length === 0) return skipped
  const fields = await redis.hmget(key, ...addresses.map((a) => `r:${a}`))
  const pending: RecipientStatus = m.status === 'scheduled' ? 'scheduled' : 'queued'
  return addresses.map((address, i): RecipientState => {
    const held = fields[i]
    if (held === null || held === undefined) return { address, status: pending, attempts: 0, last_event_at: null }
    const [status, rank, attempts, last] = held.split(' ')
    return {
      address,
      status: Number(rank) >= 0 ? status as RecipientStatus : pending,
      attempts: Number(attempts),
      last_event_at: Number(last) > 0 ? new Date(Number(last)).toISOString() : null
    }
  }).concat(skipped)
}
