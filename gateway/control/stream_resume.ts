import { jetstream } from '@nats-io/jetstream'
import {
  ApiError, eventId, eventRecord, reputationRates, type ReputationCounts, type ReputationRates, type StreamPauseRecord
} from '../../protocol/mod.ts'
import { publishEvent } from '../../stores/events/mod.ts'
import { ReputationWindow } from '../../stores/reputation/mod.ts'
import type { GatewayDeps } from '../deps.ts'

type Deps = Pick<GatewayDeps, 'config' | 'cp' | 'redis' | 'nc'>

function windowOf (deps: Deps): ReputationWindow {
  return new ReputationWindow(deps.redis, deps.config.reputation.thresholds.windowHours)
}

export interface StreamView {
  stream: string
  status: 'active' | 'paused'
  counts: ReputationCounts
  rates: ReputationRates
  paused?: { reason: StreamPauseRecord['reason'], paused_at: string, counts: ReputationCounts, rates: ReputationRates }
}

/** The organisation's streams as GET /v1/reputation shows them: the default one, those with counts, and the paused ones. */
export async function reputationView (deps: Deps, org: string): Promise<Record<string, unknown>> {
  const window = windowOf(deps)
  const pauses = deps.cp.pauses.list(org)
  const names = new Set([...await window.streams(org), ...pauses.map((p) => p.stream)])
  names.add('transactional')
  const streams: StreamView[] = await Promise.all([...names].sort().map(async (stream) => {
    const counts = await window.read(org, stream)
    const p = deps.cp.pauses.paused(org, stream)
    return {
      stream,
      status: p === undefined ? 'active' : 'paused',
      counts,
      rates: reputationRates(counts),
      ...(p !== undefined ? { paused: { reason: p.reason, paused_at: p.paused_at, counts: p.counts, rates: p.rates } } : {})
    }
  }))
  const t = deps.config.reputation.thresholds
  return {
    guard: deps.config.reputation.enabled ? 'on' : 'off',
    window_hours: t.windowHours,
    thresholds: { complaint_rate: t.complaintRate, bounce_rate: t.bounceRate, min_volume: t.minVolume },
    streams
  }
}

/**
 * Resumes a paused stream: tells the organisation first (`stream.resumed`), then empties its window (else the next
 * outcome would trip it again on the same counts), then ends the pause, which every gateway sees through the control
 * plane. The event goes first so that a publish refused by a full or cut JetStream leaves the stream paused and the
 * request to be retried, rather than a running stream whose resume no event records; its id comes from the pause,
 * so a retry's event is the same one. 404 when the stream is not paused.
 */
export async function resumeStream (
  deps: Deps, org: string, stream: string, by: 'admin' | 'operator'
): Promise<{ stream: string, status: 'active', resumed_at: string, paused_at: string }> {
  const current = deps.cp.pauses.paused(org, stream)
  if (current === undefined) throw new ApiError('not_found', `Stream ${stream} is not paused.`)
  const resumedAt = new Date().toISOString()
  const data = { stream, resumed_at: resumedAt, resumed_by: by, paused_at: current.paused_at }
  await publishEvent(jetstream(deps.nc), eventRecord(eventId('stream.resumed', org, stream, current.paused_at), 'stream.resumed', org, data,
    undefined, resumedAt))
  await windowOf(deps).reset(org, stream)
  const ended = await deps.cp.pauses.resume(org, stream)
  if (ended === undefined) throw new ApiError('not_found', `Stream ${stream} is not paused.`)
  return { stream, status: 'active', resumed_at: resumedAt, paused_at: ended.paused_at }
}
