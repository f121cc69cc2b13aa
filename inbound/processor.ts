import type { Logger } from 'pino'
import { eventId, eventRecord, type RouteRecord, type VerpAddress, type InternalErrorCode, type InboundJob } from '../protocol/mod.ts'
import { publishEvent } from '../stores/events/mod.ts'
import { type ControlPlane } from '../stores/control_plane/mod.ts'
import type { AnalysisPool } from './analysis_pool.ts'
import { emitReportEvents } from './report_events.ts'
import { checkRouted, checkVerp, type MessageLookup, type ReportDrops, type ReportSubject } from './report_checks.ts'
import { isUnsubscribeRequest, unsubscribeByMail } from './mail_unsubscribe.ts'
import { resolveRecipient } from './recipients.ts'
import { readRaw, type InboundStores } from './streams.ts'
import { readSmall, deleteSmall, RAW_SETTLE_MS, type JustStored } from './raw_store.ts'
import { keepForReaders } from '../stores/inbound_raw/mod.ts'
import { inboundPayload, unprocessedPayload } from './event_payload.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'

export interface ProcessorDeps {
  cp: ControlPlane
  /** Sent messages (the read model), to check reports against. */
  messages: MessageLookup
  drops: ReportDrops
  metrics: OutboxMetrics
  stores: InboundStores
  log: Logger
  analysis: AnalysisPool
  /** Messages the SMTP listener of this process just stored. */
  justStored?: JustStored
  /** The most an `inbound.received` event's data takes (OB_INBOUND_EVENT_MAX_BYTES, and within NATS max_payload). */
  eventMaxBytes: number
}

/** A job whose message is not readable yet; the consumer retries it. */
export class RawNotYetStored extends Error {
  readonly code = 'inbound_raw_pending' satisfies InternalErrorCode
  constructor (id: string) {
    super(`message ${id} is not readable yet`)
    this.name = 'RawNotYetStored'
  }
}

/**
 * One stored message: reports become bounced/complained, an unsubscribe request to a return path becomes
 * `unsubscribed`, routed mail becomes `inbound.received` per route.
 */
export class InboundProcessor {
  constructor (private readonly deps: ProcessorDeps) {}

  /** `inline`: the message, when it travelled inside its job (then there is nothing to read or delete). */
  async handle (job: InboundJob, inline?: Buffer): Promise<void> {
    const { cp, stores, log } = this.deps
    const raw = inline ?? this.deps.justStored?.take(job.id) ??
      (job.raw !== undefined ? await readSmall(stores, job.raw) : await readRaw(stores, job.id))
    if (raw === null) {
      // The chunk and the job are stored by two streams at once: a job may be read a moment before its chunk.
      if (job.raw !== undefined && Date.now() - Date.parse(job.received_at) < RAW_SETTLE_MS) throw new RawNotYetStored(job.id)
      return // processed and deleted already (a redelivered job)
    }
    const remove = async (): Promise<void> => {
      if (inline !== undefined) return // acknowledging the job removes it
      if (job.raw !== undefined) await deleteSmall(stores, job.raw.token)
      else await stores.raw.delete(job.id)
    }

    const { reportTargets, routes } = this.recipientsOf(job)
    if (reportTargets.length === 0 && routes.size === 0) {
      await remove()
      return
    }

    const m = await this.deps.analysis.analyze({
      raw,
      job,
      routed: routes.size > 0,
      withContent: [...routes.values()].some((h) => h.route.action.include_attachments),
      reports: true
    })
    const checks = { cp, messages: this.deps.messages, drops: this.deps.drops }
    const unsubscribe = m.report === undefined && isUnsubscribeRequest(m)
    if (m.report !== undefined || unsubscribe) {
      const subjects: ReportSubject[] = []
      for (const t of reportTargets) {
        const subject = await checkVerp(checks, t.verp, t.orgId, job.id)
        if (subject !== undefined) subjects.push(subject)
      }
      if (m.report !== undefined) {
        // A report through routes: once per organisation (all routes of a domain are its owner's).
        for (const orgId of new Set([...routes.values()].map((h) => h.route.org_id))) {
          const subject = await checkRouted(checks, m.report, orgId, job.id)
          if (subject !== undefined) subjects.push(subject)
        }
        const deps = { cp, js: stores.pub, log, drops: this.deps.drops, metrics: this.deps.metrics }
        for (const subject of subjects) await emitReportEvents(deps, m.report, subject, job.id)
      } else {
        for (const subject of subjects) await unsubscribeByMail({ cp, js: stores.pub, metrics: this.deps.metrics }, subject)
      }
    } else if (reportTargets.length > 0) {
      log.info({ id: job.id }, 'mail to a bounce address that is not a delivery or feedback report nor an unsubscribe request; dropped')
    }
    const readers = new Set<string>()
    const received = [...routes.values()].map(({ route, to }) => {
      const { data, cut } = inboundPayload(m, job, route, to, this.deps.eventMaxBytes)
      if (cut) {
        readers.add(route.org_id)
        this.deps.metrics.inboundEventsCut.inc()
      }
      return eventRecord(eventId('inbound.received', job.id, route.id), 'inbound.received', route.org_id, data, job.id)
    })
    // An event that left something out points at the whole message: it is kept (until the bucket's TTL) for the
    // organisations whose events do, before any event names it.
    if (readers.size > 0) await keepForReaders(stores.raw, job.id, [...readers], inline)
    for (const e of received) await publishEvent(stores.pub, e)
    if (readers.size === 0) await remove()
  }

  /** Where the message goes: its routes (with the recipients each matched) and the bounce addresses it was sent to. */
  private recipientsOf (job: InboundJob): { reportTargets: Array<{ verp: VerpAddress, orgId: string }>, routes: Map<string, RoutedTo> } {
    const reportTargets: Array<{ verp: VerpAddress, orgId: string }> = []
    const routes = new Map<string, RoutedTo>()
    for (const rcpt of job.rcpt_to) {
      // Routes are looked up again: one deleted since the RCPT gets nothing; the message is still ours to drop.
      const r = resolveRecipient(this.deps.cp, rcpt)
      if (r.kind === 'verp') reportTargets.push({ verp: r.verp, orgId: r.orgId })
      if (r.kind !== 'route') continue
      for (const route of r.routes) {
        const hit = routes.get(route.id) ?? { route, to: [] }
        hit.to.push(rcpt.toLowerCase())
        routes.set(route.id, hit)
      }
    }
    return { reportTargets, routes }
  }

  /**
   * Ends a message that could not be processed however often it was tried (its analysis or its events failed each
   * time): every route still gets its `inbound.received`, carrying the envelope, `processing_error` and a reference to
   * the whole message (`raw`, kept for the routes' organisations), so the mail an SMTP client was told was taken
   * never vanishes with a log line. A report or unsubscribe request to a bounce address that cannot be read has no
   * one to tell: it is dropped and counted as a report drop. Throws when the event cannot be stored either (the job
   * is then tried again later).
   */
  async endUnprocessable (job: InboundJob, inline: Buffer | undefined, reason: string): Promise<void> {
    const { stores } = this.deps
    let raw: Uint8Array | null | undefined
    try {
      raw = inline ?? this.deps.justStored?.take(job.id) ??
        (job.raw !== undefined ? await readSmall(stores, job.raw) : await readRaw(stores, job.id))
    } catch {
      raw = undefined // the stored message itself cannot be read: the events carry the envelope alone
    }
    if (raw === null) return // processed and deleted already
    const { routes, reportTargets } = this.recipientsOf(job)
    if (reportTargets.length > 0) this.deps.drops.drop('unreadable', { id: job.id, reason })
    if (routes.size > 0) {
      // kept where the raw read finds it: a message stored whole stays; one inline or among small ones is put there
      const orgIds = [...new Set([...routes.values()].map((h) => h.route.org_id))]
      if (raw !== undefined) await keepForReaders(stores.raw, job.id, orgIds, inline ?? (job.raw !== undefined ? raw : undefined))
      const why = raw !== undefined ? reason : `${reason}; the stored message could not be read either`
      for (const { route, to } of routes.values()) {
        const data = unprocessedPayload(job, route, to, why, raw !== undefined)
        const id = eventId('inbound.received', job.id, route.id)
        await publishEvent(stores.pub, eventRecord(id, 'inbound.received', route.org_id, data, job.id))
      }
    }
    // a stored message that cannot be removed is left to its bucket's TTL rather than failing the ending
    if (job.raw !== undefined) await deleteSmall(stores, job.raw.token).catch(() => {})
    else if (routes.size === 0 && inline === undefined) await stores.raw.delete(job.id).catch(() => {})
  }
}

interface RoutedTo { route: RouteRecord, to: string[] }
