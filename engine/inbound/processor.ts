import { simpleParser, type ParsedMail, type AddressObject } from 'mailparser'
import type { Logger } from 'pino'
import {
  analyzeContent, eventId, eventRecord, publishEvent, type ControlPlane, type RouteRecord
} from '../protocol/mod.ts'
import { checkAuthentication, type Authentication, type DnsResolve } from './authenticate.ts'
import { readReport } from './reports.ts'
import { emitReportEvents, type ReportTarget } from './report_events.ts'
import { resolveRecipient } from './recipients.ts'
import { readRaw, type InboundStores } from './streams.ts'
import type { InboundJob } from './job.ts'

export interface ProcessorDeps {
  cp: ControlPlane
  stores: InboundStores
  log: Logger
  resolver: DnsResolve
  /** Our host name, as mailauth writes it into its results. */
  mta: string
  /** NATS max_payload: an event must fit in one message. */
  maxPayload: number
}

function headerMap (parsed: ParsedMail): Record<string, string> {
  const out: Record<string, string> = {}
  for (const h of parsed.headerLines) {
    const colon = h.line.indexOf(':')
    const value = h.line.slice(colon + 1).replace(/\r?\n[ \t]+/g, ' ').trim()
    // Repeated headers (Received) are kept in order, one per line.
    out[h.key] = out[h.key] === undefined ? value : `${out[h.key]}\n${value}`
  }
  return out
}

function addressText (a: AddressObject | AddressObject[] | undefined): string {
  if (a === undefined) return ''
  return (Array.isArray(a) ? a : [a]).map((x) => x.text).join(', ')
}

/**
 * The `inbound.received` payload for one route. When it would not fit in one NATS message, attachment contents
 * are dropped first (`content_omitted: true`), then text and HTML are cut (`truncated: true`).
 */
export function inboundPayload (parsed: ParsedMail, job: InboundJob, route: RouteRecord, to: string[], auth: Authentication, spamScore: number, maxBytes: number): Record<string, unknown> {
  const attachments = parsed.attachments.map((a) => ({
    filename: a.filename ?? '',
    content_type: a.contentType,
    size: a.size,
    ...(route.action.include_attachments ? { content: a.content.toString('base64') } : {})
  }))
  const data: Record<string, unknown> = {
    message_id: job.id,
    route_id: route.id,
    from: addressText(parsed.from),
    to,
    subject: parsed.subject ?? '',
    text: parsed.text ?? '',
    html: typeof parsed.html === 'string' ? parsed.html : '',
    headers: headerMap(parsed),
    authentication: auth,
    spam_score: spamScore,
    attachments,
    received_at: job.received_at
  }
  const budget = maxBytes - 4096 // the record's envelope around data
  if (Buffer.byteLength(JSON.stringify(data)) <= budget) return data
  data.attachments = attachments.map(({ content: _c, ...rest }) => ({ ...rest, ...(route.action.include_attachments ? { content_omitted: true } : {}) }))
  let size = Buffer.byteLength(JSON.stringify(data))
  if (size <= budget) return data
  const over = size - budget
  for (const field of ['html', 'text'] as const) {
    const s = data[field] as string
    if (s.length === 0) continue
    data[field] = s.slice(0, Math.max(0, s.length - over))
    data.truncated = true
    size = Buffer.byteLength(JSON.stringify(data))
    if (size <= budget) break
  }
  return data
}

/** One stored message: reports become bounced/complained, routed mail becomes `inbound.received` per route. */
export class InboundProcessor {
  constructor (private readonly deps: ProcessorDeps) {}

  async handle (job: InboundJob): Promise<void> {
    const { cp, stores, log } = this.deps
    const raw = await readRaw(stores, job.id)
    if (raw === null) return // processed and deleted already (a redelivered job)
    // textAsHtml is not part of the payload, and its linkify pass costs more than the rest of the parse.
    const parsed = await simpleParser(raw, { keepDeliveryStatus: true, skipTextLinks: true, skipTextToHtml: true })

    const reportTargets: ReportTarget[] = []
    const routes = new Map<string, { route: RouteRecord, to: string[] }>()
    for (const rcpt of job.rcpt_to) {
      // Routes are looked up again: one deleted since the RCPT gets nothing; the message is still ours to drop.
      const r = resolveRecipient(cp, rcpt)
      if (r.kind === 'verp') reportTargets.push({ kind: 'verp', verp: r.verp, orgId: r.orgId })
      if (r.kind !== 'route') continue
      for (const route of r.routes) {
        const hit = routes.get(route.id) ?? { route, to: [] }
        hit.to.push(rcpt.toLowerCase())
        routes.set(route.id, hit)
      }
    }

    const report = reportTargets.length > 0 || routes.size > 0 ? await readReport(parsed) : undefined
    if (report !== undefined) {
      const targets = [...reportTargets, ...[...routes.values()].map((h): ReportTarget => ({ kind: 'route', orgId: h.route.org_id }))]
      for (const t of targets) await emitReportEvents({ cp, js: stores.js, log }, report, t)
    } else if (reportTargets.length > 0) {
      log.info({ id: job.id }, 'mail to a bounce address that is not a delivery or feedback report; dropped')
    }

    if (routes.size > 0) {
      const auth = await checkAuthentication(raw, job, this.deps.resolver, this.deps.mta)
      const spam = analyzeContent({
        subject: parsed.subject ?? '',
        html: typeof parsed.html === 'string' ? parsed.html : '',
        text: parsed.text ?? '',
        from: addressText(parsed.from),
        attachments: parsed.attachments.map((a) => ({ filename: a.filename ?? '' }))
      })
      for (const { route, to } of routes.values()) {
        const data = inboundPayload(parsed, job, route, to, auth, spam.score, this.deps.maxPayload)
        await publishEvent(stores.js, eventRecord(eventId('inbound.received', job.id, route.id), 'inbound.received', route.org_id, data, job.id))
      }
    }
    await stores.raw.delete(job.id)
  }
}
