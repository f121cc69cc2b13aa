import { streamOf } from './message_streams.ts'
import { createHash } from 'node:crypto'
import { ApiError } from './errors.ts'

/**
 * Reputation guards (docs/reputation.md): per organisation and stream, the hard-bounce and complaint rates over a rolling
 * window of whole UTC hours, and the thresholds past which sending on the stream pauses. Pure: no I/O.
 *
 * The arithmetic, as documented:
 *   volume          = delivered + hard_bounced      (recipients whose delivery ended in the window; soft bounces and
 *                                                    deferrals are left out, as they say nothing about the list)
 *   bounce rate     = hard_bounced / volume
 *   complaint rate  = complained / volume
 * A rate trips only once `volume >= minVolume`, so a handful of sends cannot pause a stream; at the threshold itself it
 * trips (`>=`), as the Gmail and Yahoo bulk-sender rule reads "0.3 % or more".
 */

export interface ReputationCounts { delivered: number, hard_bounced: number, complained: number }

export interface ReputationThresholds {
  /** Complaint rate (a fraction: 0.003 is 0.3 %) at or above which a stream pauses. */
  readonly complaintRate: number
  /** Hard-bounce rate (a fraction) at or above which a stream pauses. */
  readonly bounceRate: number
  /** The volume (delivered + hard bounced) the window must hold before either rate applies. */
  readonly minVolume: number
  /** Whole UTC hours the window spans, the current one included. */
  readonly windowHours: number
}

export interface ReputationRates { volume: number, bounce_rate: number, complaint_rate: number }

export type PauseReason = 'complaint_rate' | 'bounce_rate'

const EPSILON = 1e-12

export function reputationRates (c: ReputationCounts): ReputationRates {
  const volume = c.delivered + c.hard_bounced
  return {
    volume,
    bounce_rate: volume === 0 ? 0 : c.hard_bounced / volume,
    complaint_rate: volume === 0 ? 0 : c.complained / volume
  }
}

/** Why these counts pause their stream, or undefined. Complaints are checked first: they are the graver signal. */
export function pauseReason (c: ReputationCounts, t: ReputationThresholds): PauseReason | undefined {
  const r = reputationRates(c)
  if (r.volume < t.minVolume) return undefined
  // a rate equal to its threshold on paper may land a rounding error below it (9 / 1000 < 0.9 / 100)
  if (r.complaint_rate >= t.complaintRate - EPSILON) return 'complaint_rate'
  if (r.bounce_rate >= t.bounceRate - EPSILON) return 'bounce_rate'
  return undefined
}

/** A paused stream, in the control plane (`ob_egress` bucket, STREAM_PAUSE_KEYS), mirrored in every process. */
export interface StreamPauseRecord {
  kind: 'stream_pause'
  org_id: string
  stream: string
  reason: PauseReason
  paused_at: string
  /** The window as it stood when it tripped. */
  counts: ReputationCounts
  rates: ReputationRates
}

/** The stream names a path may carry: what the API accepts as a stream name. */
export const STREAM_NAME_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$'
const STREAM_NAME = new RegExp(STREAM_NAME_PATTERN)

/**
 * Keys in `ob_egress`. A stream name of the API's shape is a valid KV key token as it is, so the per-send look-up builds
 * a string and hashes nothing; any other name is keyed by a digest, marked by `=`, which no such name holds.
 */
export const STREAM_PAUSE_KEYS = {
  prefix: 'pause.',
  orgPrefix: (org: string): string => `pause.${org}.`,
  pause: (org: string, stream: string): string =>
    `pause.${org}.${STREAM_NAME.test(stream) ? stream : '=' + createHash('sha256').update(stream).digest('hex').slice(0, 40)}`
} as const

/** The sentence a refused send carries, in the HTTP error and the SMTP reply alike. */
export function pausedMessage (p: StreamPauseRecord): string {
  const what = p.reason === 'complaint_rate'
    ? `its complaint rate reached ${percent(p.rates.complaint_rate)}`
    : `its hard-bounce rate reached ${percent(p.rates.bounce_rate)}`
  return `Sending on stream ${p.stream} is paused since ${p.paused_at}: ${what} over ${p.rates.volume} sends. ` +
    `An admin resumes it with POST /v1/reputation/streams/${p.stream}/resume.`
}

export function percent (fraction: number): string {
  return `${Math.round(fraction * 10_000) / 100} %`
}

/**
 * The stream of an event: the record's own `stream`, else its data's, else the default. Events stored before streams
 * existed name none, and so count for the default stream.
 */
export function eventStream (e: { stream?: unknown, data: Record<string, unknown> }): string {
  return streamOf(e.stream !== undefined ? e : e.data)
}

/**
 * The API error of a send on a paused stream (423 `stream_paused`: the stream stays locked until resumed); its details
 * say which stream, why and since when.
 */
export function streamPausedError (p: StreamPauseRecord, field?: string): ApiError {
  return new ApiError('stream_paused', pausedMessage(p), {
    ...(field !== undefined ? { field } : {}),
    details: { stream: p.stream, reason: p.reason, paused_at: p.paused_at, rates: p.rates }
  })
}
