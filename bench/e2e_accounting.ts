import { percentile } from './soak_probe.ts'
import type { Arrival } from './sink_process.ts'

/**
 * The end-to-end bench's books: every accepted send must reach the SMTP sink exactly once and be followed by
 * exactly one signed `delivered` webhook. Pure: the inputs are what the load generator, the sink and the
 * webhook receiver recorded.
 */
export interface AcceptedSend { id: string, sentAt: number }

export interface Books {
  accepted: number
  /** Accepted, but never reached the sink. */
  lost: number
  /** Accepted, and reached the sink more than once (counted once per message). */
  duplicated: number
  /** SMTP transactions beyond the first for those messages. */
  extraCopies: number
  /** At the sink under one of our Message-IDs although no 202 was seen for it (a send that timed out on the client). */
  unacknowledged: number
  /** Accepted and delivered, but without a `delivered` webhook. */
  webhookMissing: number
  /** Accepted messages with more than one `delivered` webhook. */
  webhookDuplicated: number
  /** First arrival at the sink of each accepted message minus its send time (X-Bench-Sent, else the client's record), ms. */
  sendToSinkMs: { p50: number, p99: number, max: number }
  /** How many of those latencies came from the X-Bench-Sent header (the rest from the client's record). */
  timedByHeader: number
  /** Latest first arrival of an accepted message (ms since the epoch); 0 when none arrived. */
  lastArrivalAt: number
}

/** Message-ID the engine gives a message: `<id@sending-domain>`. */
export const messageIdOf = (id: string, domain: string): string => `<${id}@${domain}>`

export function keepBooks (
  accepted: readonly AcceptedSend[], arrivals: readonly Arrival[], webhooks: ReadonlyMap<string, number>, domain: string
): Books {
  const suffix = `@${domain}>`
  const atSink = new Map<string, { count: number, first: number, sentAt: number }>()
  for (const [messageId, receivedAt, sentAt] of arrivals) {
    if (!messageId.endsWith(suffix)) continue
    const seen = atSink.get(messageId)
    if (seen === undefined) atSink.set(messageId, { count: 1, first: receivedAt, sentAt })
    else { seen.count++; seen.first = Math.min(seen.first, receivedAt) }
  }
  const ours = new Set<string>()
  const latencies: number[] = []
  let lost = 0
  let duplicated = 0
  let extraCopies = 0
  let webhookMissing = 0
  let webhookDuplicated = 0
  let lastArrivalAt = 0
  let timedByHeader = 0
  for (const a of accepted) {
    const mid = messageIdOf(a.id, domain)
    ours.add(mid)
    const s = atSink.get(mid)
    const hooks = webhooks.get(a.id) ?? 0
    if (hooks > 1) webhookDuplicated++
    if (s === undefined) { lost++; continue }
    if (hooks === 0) webhookMissing++
    if (s.count > 1) { duplicated++; extraCopies += s.count - 1 }
    if (Number.isFinite(s.sentAt)) timedByHeader++
    latencies.push(s.first - (Number.isFinite(s.sentAt) ? s.sentAt : a.sentAt))
    lastArrivalAt = Math.max(lastArrivalAt, s.first)
  }
  const unacknowledged = [...atSink.keys()].filter((m) => !ours.has(m)).length
  return {
    accepted: accepted.length,
    lost,
    duplicated,
    extraCopies,
    unacknowledged,
    webhookMissing,
    webhookDuplicated,
    sendToSinkMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.reduce((m, v) => Math.max(m, v), 0) },
    timedByHeader,
    lastArrivalAt
  }
}

/**
 * What makes the run fail: mail lost or delivered twice, or a delivered message whose `delivered` webhook never
 * came (a lost event). A repeated webhook is reported, not failed: webhooks are promised at least once.
 */
export function bookFailures (b: Books): string[] {
  const out: string[] = []
  if (b.lost > 0) out.push(`${b.lost} of ${b.accepted} accepted message(s) never reached the SMTP sink`)
  if (b.duplicated > 0) out.push(`${b.duplicated} accepted message(s) reached the SMTP sink more than once (${b.extraCopies} extra copies)`)
  if (b.webhookMissing > 0) out.push(`${b.webhookMissing} delivered message(s) without a signed \`delivered\` webhook`)
  return out
}
