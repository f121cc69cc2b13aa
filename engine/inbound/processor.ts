import type { Logger } from 'pino'
import { eventId, eventRecord, type InboundReceivedData, type RouteRecord, type VerpAddress } from '../../protocol/mod.ts'
import { publishEvent } from '../../stores/events/mod.ts'
import { type ControlPlane } from '../../stores/control_plane/mod.ts'
import type { MessageAnalysis } from './analysis.ts'
import type { AnalysisPool } from './analysis_pool.ts'
import { emitReportEvents } from './report_events.ts'
import { checkRouted, checkVerp, type MessageLookup, type ReportDrops, type ReportSubject } from './report_checks.ts'
import { isUnsubscribeRequest, unsubscribeByMail } from './mail_unsubscribe.ts'
import { resolveRecipient } from './recipients.ts'
import { readRaw, type InboundStores } from './streams.ts'
import { readSmall, deleteSmall, RAW_SETTLE_MS, type JustStored } from './raw_store.ts'
import type { InboundJob } from './job.ts'
import type { OutboxMetrics } from '../../stores/metrics/mod.ts'

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
  /** NATS max_payload: an event must fit in one message. */
  maxPayload: number
}

/**
 * An upper bound of the UTF-8 size of `JSON.stringify(value)` for plain JSON data, found without serialising: no
 * UTF-16 unit of a string takes more than 6 bytes (`\uXXXX`), no number more than 24. Nearly every message is far
 * under the event size limit, and this tells so for a fraction of what serialising the payload costs.
 */
export function jsonSizeBound (value: unknown): number {
  if (typeof value === 'string') return 6 * value.length + 2
  if (typeof value === 'number') return 24
  if (value === null || typeof value !== 'object') return 5
  let n = 2
  if (Array.isArray(value)) {
    for (const v of value) n += jsonSizeBound(v) + 1
    return n
  }
  for (const k in value) n += 6 * k.length + 4 + jsonSizeBound((value as Record<string, unknown>)[k])
  return n
}

/**
 * The `inbound.received` payload for one route. When it would not fit in one NATS message, attachment contents
 * are dropped first (`content_omitted: true`), then text and HTML are cut (`truncated: true`).
 */
export function inboundPayload (m: MessageAnalysis, job: InboundJob, route: RouteRecord, to: string[], maxBytes: number): InboundReceivedData {
  const include = route.action.include_attachments
  type Attachment = MessageAnalysis['attachments'][number]
  const attachments: Attachment[] = m.attachments.map(({ content, ...rest }) => include && content !== undefined ? { ...rest, content } : rest)
  const data: InboundReceivedData = {
    message_id: job.id,
    route_id: route.id,
    from: m.from,
    to,
    subject: m.subject,
    text: m.text,
    html: m.html,
    headers: m.headers,
    authentication: m.authentication,
    spam_score: m.spamScore,
    content_analysis: m.contentAnalysis,
    attachments,
    received_at: job.received_at
  }
  const budget = maxBytes - 4096 // the record's envelope around data
  if (jsonSizeBound(data) <= budget || Buffer.byteLength(JSON.stringify(data)) <= budget) return data
  data.attachments = attachments.map(({ content: _c, ...rest }) => ({ ...rest, ...(include ? { content_omitted: true } : {}) }))
  let size = Buffer.byteLength(JSON.stringify(data))
  if (size <= budget) return data
  const over = size - budget
  for (const field of ['html', 'text'] as const) {
    const s = data[field]
    if (s.length === 0) continue
    data[field] = s.slice(0, Math.max(0, s.length - over))
    data.truncated = true
    size = Buffer.byteLength(JSON.stringify(data))
    if (size <= budget) break
  }
  return data
}

/** A job whose message is not readable yet; the consumer retries it. */
export class RawNotYetStored extends Error {
  readonly code = 'E_INBOUND_RAW_PENDING'
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
    const raw = inline ?? this.deps.justStored?.take(job.id) ?? (job.raw !== undefined ? await readSmall(stores, job.raw) : await readRaw(stores, job.id))
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

    const reportTargets: Array<{ verp: VerpAddress, orgId: string }> = []
    const routes = new Map<string, { route: RouteRecord, to: string[] }>()
    for (const rcpt of job.rcpt_to) {
      // Routes are looked up again: one deleted since the RCPT gets nothing; the message is still ours to drop.
      const r = resolveRecipient(cp, rcpt)
      if (r.kind === 'verp') reportTargets.push({ verp: r.verp, orgId: r.orgId })
      if (r.kind !== 'route') continue
      for (const route of r.routes) {
        const hit = routes.get(route.id) ?? { route, to: [] }
        hit.to.push(rcpt.toLowerCase())
        routes.set(route.id, hit)
      }
    }
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
    for (const { route, to } of routes.values()) {
      const data = inboundPayload(m, job, route, to, this.deps.maxPayload)
      await publishEvent(stores.pub, eventRecord(eventId('inbound.received', job.id, route.id), 'inbound.received', route.org_id, data, job.id))
    }
    await remove()
  }
}
