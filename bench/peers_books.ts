import { percentile } from './soak_probe.ts'
import type { Arrival } from './sink_process.ts'

/**
 * The side-by-side benchmark's books for one phase of one system: what was accepted (250 to the SMTP client, 202 to
 * the HTTP client) against what reached the sink, by Message-ID, and whether each arrived DKIM-signed by the test
 * domain. Pure: the inputs are what the load generator and the sink recorded.
 */
export interface PeerBooks {
  accepted: number
  /** Accepted, never at the sink. */
  lost: number
  /** Accepted, at the sink more than once (counted once per message); extraCopies counts the copies beyond the first. */
  duplicated: number
  extraCopies: number
  /** Of this phase's messages at the sink without an accept seen by the client (a send cut off by a kill). */
  unacknowledged: number
  /** Accepted and arrived with a DKIM-Signature whose d= is the test domain / with another d= / with none. */
  signed: number
  signedOther: number
  unsigned: number
  /** Latest first arrival of an accepted message (ms since the epoch); 0 when none arrived. */
  lastArrivalAt: number
}

/** The `d=` of a DKIM-Signature header value, lower-cased; '' when there is no header, '?' when it has no d=. */
export function dkimDomainOf (signature: string | undefined): string {
  return signature === undefined ? '' : (/(?:^|;)\s*d=([^;\s]+)/.exec(signature)?.[1] ?? '?').toLowerCase()
}

export function peerBooks (
  accepted: ReadonlyArray<{ messageId: string }>, arrivals: readonly Arrival[], domain: string, belongs: (messageId: string) => boolean
): PeerBooks {
  const atSink = new Map<string, { count: number, first: number, dkim: string }>()
  for (const [mid, at, , dkim] of arrivals) {
    if (!belongs(mid)) continue
    const s = atSink.get(mid)
    if (s === undefined) atSink.set(mid, { count: 1, first: at, dkim: dkim ?? '' })
    else { s.count++; s.first = Math.min(s.first, at) }
  }
  const ids = new Set(accepted.map((a) => a.messageId))
  const b: PeerBooks = {
    accepted: ids.size, lost: 0, duplicated: 0, extraCopies: 0, unacknowledged: 0, signed: 0, signedOther: 0, unsigned: 0, lastArrivalAt: 0
  }
  for (const mid of ids) {
    const s = atSink.get(mid)
    if (s === undefined) { b.lost++; continue }
    if (s.count > 1) { b.duplicated++; b.extraCopies += s.count - 1 }
    if (s.dkim === domain.toLowerCase()) b.signed++
    else if (s.dkim === '') b.unsigned++
    else b.signedOther++
    b.lastArrivalAt = Math.max(b.lastArrivalAt, s.first)
  }
  for (const mid of atSink.keys()) if (!ids.has(mid)) b.unacknowledged++
  return b
}

export interface Latency { p50: number, p99: number, max: number }

export function latencyOf (ms: readonly number[]): Latency {
  const r = (x: number): number => Math.round(x * 10) / 10
  return { p50: r(percentile([...ms], 50)), p99: r(percentile([...ms], 99)), max: r(ms.reduce((m, v) => Math.max(m, v), 0)) }
}
