import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../../config/mod.ts'
import {
  eventId, eventRecord, eventStream, pauseReason, reputationRates, type EventRecord, type ReputationCounts, type ReputationRates,
  type StreamPauseRecord
} from '../../protocol/mod.ts'
import type { JsPublish } from '../clients/mod.ts'
import type { ControlPlane } from '../control_plane/mod.ts'
import { publishEvent } from '../events/mod.ts'
import type { OutboxMetrics } from '../metrics/mod.ts'
import { ReputationWindow, type ReputationField } from './reputation_window.ts'

const HOUR_MS = 3600_000

/**
 * Which window field a live event adds to, if any. Hard bounces only: a soft bounce (a full mailbox, a message too
 * large) says nothing about the list. An operator's bounce of waiting mail is no answer of a receiver, so it counts not.
 */
export function reputationField (e: EventRecord): ReputationField | undefined {
  if (e.environment === 'test') return undefined
  if (e.type === 'delivered') return 'delivered'
  if (e.type === 'complained') return 'complained'
  if (e.type === 'bounced' && e.data.bounce_type === 'hard' && e.data.bounce_category !== 'operator') return 'hard_bounced'
  return undefined
}

/**
 * Counts live delivery outcomes per organisation and stream (ReputationWindow) as the projector applies them, and
 * pauses a stream whose window passes a threshold (protocol/reputation.ts): the pause goes to the control plane, which
 * every gateway mirrors, and the organisation gets one `stream.paused` event. Called once per event the read model
 * applied for the first time, so a redelivered event is not counted twice; an event whose count fails is logged and
 * not retried (a window may miss an event, never count one twice).
 */
export class ReputationGuard {
  readonly window: ReputationWindow
  /** The last window seen per `<org>\n<stream>`, for the gauges; entries older than the window are dropped. */
  private readonly seen = new Map<string, { at: number, org: string, stream: string, rates: ReputationRates }>()

  constructor (
    private readonly config: Config,
    private readonly deps: { redis: Redis, cp: ControlPlane, js: JsPublish, log: Logger, metrics: OutboxMetrics },
    private readonly now: () => number = Date.now
  ) {
    this.window = new ReputationWindow(deps.redis, config.reputation.thresholds.windowHours, now)
    const m = deps.metrics
    m.read('outbox_reputation_volume', (set) => {
      for (const s of this.current()) set(s.rates.volume, { organization: s.org, stream: s.stream })
    })
    m.read('outbox_reputation_bounce_rate', (set) => {
      for (const s of this.current()) set(s.rates.bounce_rate, { organization: s.org, stream: s.stream })
    })
    m.read('outbox_reputation_complaint_rate', (set) => {
      for (const s of this.current()) set(s.rates.complaint_rate, { organization: s.org, stream: s.stream })
    })
    m.read('outbox_stream_paused', (set) => { for (const p of deps.cp.pauses.all()) set(1, { organization: p.org_id, stream: p.stream }) })
  }

  private current (): Array<{ org: string, stream: string, rates: ReputationRates }> {
    const oldest = this.now() - this.config.reputation.thresholds.windowHours * HOUR_MS
    for (const [k, s] of this.seen) if (s.at < oldest) this.seen.delete(k)
    return [...this.seen.values()]
  }

  /** Counts the event if it is a live outcome; never throws. */
  async observe (e: EventRecord): Promise<void> {
    const field = reputationField(e)
    if (field === undefined) return
    const org = e.org_id
    const stream = eventStream(e)
    try {
      const counts = await this.window.count(org, stream, field)
      this.seen.set(`${org}\n${stream}`, { at: this.now(), org, stream, rates: reputationRates(counts) })
      if (this.config.reputation.enabled) await this.check(org, stream, counts)
    } catch (err) {
      this.deps.log.warn({ err, event: e.id, org, stream }, 'a delivery outcome was not counted in its reputation window')
    }
  }

  private async check (org: string, stream: string, tripped: ReputationCounts): Promise<void> {
    const t = this.config.reputation.thresholds
    if (pauseReason(tripped, t) === undefined || this.deps.cp.pauses.paused(org, stream) !== undefined) return
    // `tripped` may predate a resume whose end this process already sees: a resume empties the window, then ends the
    // pause, and the answer of a count made before both can arrive after the change. Paused on it, the stream would
    // pause again on the counts the resume emptied; a read made now comes after the resume, so it decides.
    const counts = await this.window.read(org, stream)
    const reason = pauseReason(counts, t)
    if (reason === undefined || this.deps.cp.pauses.paused(org, stream) !== undefined) return
    const record: StreamPauseRecord = {
      kind: 'stream_pause',
      org_id: org,
      stream,
      reason,
      paused_at: new Date(this.now()).toISOString(),
      counts,
      rates: reputationRates(counts)
    }
    // create-only: of several engines that see the window trip at once, one pauses and tells the organisation
    if (!await this.deps.cp.pauses.pause(record)) return
    const data = { stream, reason, paused_at: record.paused_at, counts, rates: record.rates }
    try {
      await publishEvent(this.deps.js, eventRecord(eventId('stream.paused', org, stream, record.paused_at), 'stream.paused', org, data,
        undefined, record.paused_at))
    } catch (err) {
      // Every pause is told. One whose event JetStream refused (full, or cut off) is taken back: the stream sends on
      // and the next outcome counted on it pauses it again, with its event.
      await this.deps.cp.pauses.withdraw(record)
      this.deps.log.warn({ err, org, stream, reason }, 'a stream pause was taken back: its stream.paused event could not be published')
      return
    }
    this.deps.log.warn({ org, stream, reason, counts }, 'sending on a stream paused: its rate passed the reputation threshold')
  }
}
