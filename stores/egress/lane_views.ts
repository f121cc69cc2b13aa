import { limitsFor, warmupAllowance, warmupDay, type LaneLimits } from '../../protocol/mod.ts'
import type { EgressSettingsRecord, EgressSourceRecord } from '../../protocol/mod.ts'
import type { EgressState } from './egress_state.ts'
import type { LaneSnapshot } from './types.ts'

/** One egress lane (a source toward a provider) as operators read it: its limits, its state now and what waits on it. */
export interface LaneView {
  lane: string
  source: string
  provider: string
  limits: LaneLimits
  /** Connections open from the source to the provider now, across the cluster. */
  connections: number
  /** The lane's rate now: its limit times the factor replies left it at. */
  messages_per_minute_now: number
  throttle: {
    /** 1: full rate; below 1: slowed by a reply, recovering (docs/egress.md). */
    factor: number
    paused_until: string | null
    out_until: string | null
    /** The reply rule that last changed it; null when none has. */
    reason: string | null
    changed_at: string | null
  }
  waiting: { messages: number, oldest_seconds: number | null }
  /** Present while the source warms up. */
  warmup?: { day: number, per_day: number, sent_today: number, per_hour: number, sent_this_hour: number }
}

const iso = (ms: number): string | null => (ms > 0 ? new Date(ms).toISOString() : null)

/**
 * Every lane the cluster has used (stores/egress snapshot), joined with the operator's configuration: the limits
 * that apply to it and, for a warming source, today's allowance. A lane that is paused or out past its end reads as
 * running: the state ends by time, whoever looks.
 */
export async function laneViews (state: EgressState, sources: (name: string) => EgressSourceRecord | undefined,
  settings: EgressSettingsRecord, now = Date.now()): Promise<LaneView[]> {
  const lanes = await state.snapshot()
  return lanes.map((l) => view(l, sources(l.source), settings, now))
    .sort((a, b) => (a.source === b.source ? a.provider.localeCompare(b.provider) : a.source.localeCompare(b.source)))
}

function view (l: LaneSnapshot, source: EgressSourceRecord | undefined, settings: EgressSettingsRecord, now: number): LaneView {
  const limits = limitsFor(l.provider, settings.limits, source?.limits)
  const t = l.throttle
  const out: LaneView = {
    lane: l.lane,
    source: l.source,
    provider: l.provider,
    limits,
    connections: l.connections,
    messages_per_minute_now: Math.floor(limits.messagesPerMinute * t.factor),
    throttle: {
      factor: t.factor,
      paused_until: t.pausedUntil > now ? iso(t.pausedUntil) : null,
      out_until: t.outUntil > now ? iso(t.outUntil) : null,
      reason: t.reason === '' ? null : t.reason,
      changed_at: iso(t.changedAt)
    },
    waiting: { messages: l.waiting, oldest_seconds: l.oldestWaitingMs === undefined ? null : Math.round(l.oldestWaitingMs / 1000) }
  }
  const w = source?.warmup
  if (w !== undefined) {
    const startedAt = Date.parse(w.started_at)
    const allowance = warmupAllowance(startedAt, now, w.steps)
    if (allowance !== undefined) {
      out.warmup = {
        day: warmupDay(startedAt, now),
        per_day: allowance.perDay,
        sent_today: l.warmup.sentToday,
        per_hour: allowance.perHour,
        sent_this_hour: l.warmup.sentThisHour
      }
    }
  }
  return out
}
