import type { Logger } from 'pino'
import { bounceCategory, eventId, eventRecord, isBroadcast, streamField, suppresses, tagsField } from '../protocol/mod.ts'
import { publishEvent, suppressAddress } from '../stores/events/mod.ts'
import { type ControlPlane } from '../stores/control_plane/mod.ts'
import { type JsPublish } from '../stores/clients/mod.ts'
import { bounceCode, type Report } from './reports.ts'
import type { ReportDrops, ReportSubject } from './report_checks.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'

export interface ReportDeps { cp: ControlPlane, js: JsPublish, log: Logger, drops: ReportDrops, metrics: OutboxMetrics }

/**
 * Turns a DSN into `bounced` (5.x.x hard, 4.x.x soft; its category from the same classifier as SMTP replies, and
 * only a hard `mailbox` or `domain` bounce suppresses) and an ARF report into `complained` (and suppression), for
 * the message and recipients `subject` allows (report_checks.ts). A report recipient outside them is dropped and
 * counted: the report is either not about this mail or forged.
 */
export async function emitReportEvents (deps: ReportDeps, report: Report, subject: ReportSubject, inboundId: string): Promise<number> {
  const { orgId, messageId, environment, domain } = subject
  const live = environment === 'live'
  const allowed = (a: string): boolean => subject.recipients.includes(a.toLowerCase())
  const mismatch = (named: string[]): void =>
    deps.drops.drop('recipient_mismatch', { id: inboundId, message_id: messageId, org_id: orgId, named })
  const now = new Date().toISOString()
  let emitted = 0
  if (report.kind === 'dsn') {
    for (const r of report.recipients) {
      const to = r.addresses.find(allowed)
      if (to === undefined) { mismatch(r.addresses); continue }
      const cls = r.status[0]
      if (cls !== '5' && cls !== '4') continue // 2.x.x: delivered/relayed notices are not bounces
      const hard = cls === '5'
      const code = bounceCode(r)
      const category = bounceCategory({
        code: /^\d{3}$/.test(code) ? code : '', enhanced: r.status, text: r.diagnostic.replace(/^\s*smtp\s*;\s*/i, '')
      })
      if (live && hard && suppresses(category) && await suppressAddress(deps.cp, orgId, to, 'hard_bounce', messageId)) {
        deps.metrics.suppressionsAdded.hard_bounce.inc()
      }
      deps.metrics.bounces[environment][hard ? 'hard' : 'soft'][category].inc()
      await publishEvent(deps.js, eventRecord(eventId('bounced', orgId, messageId, to, 'dsn'), 'bounced', orgId, {
        message_id: messageId,
        to,
        bounce_type: hard ? 'hard' : 'soft',
        bounce_code: code,
        bounce_message: r.diagnostic.replace(/^\s*smtp\s*;\s*/i, '') || `${r.action} ${r.status}`.trim(),
        bounce_category: category,
        bounced_at: now,
        ...tagsField(subject.tags),
        ...streamField(subject.stream)
      }, messageId, now, environment, domain))
      emitted++
    }
    return emitted
  }
  const candidates = [report.originalRecipient, report.originalTo].filter((a): a is string => a !== undefined)
  const to = candidates.find(allowed)
  if (to === undefined) { mismatch(candidates); return 0 }
  // a complaint about broadcast mail stops that stream only; one about transactional mail stops every stream
  const only = isBroadcast(subject.stream) ? subject.stream : undefined
  if (live && await suppressAddress(deps.cp, orgId, to, 'complaint', messageId, only)) deps.metrics.suppressionsAdded.complaint.inc()
  deps.metrics.complaints[environment].inc()
  await publishEvent(deps.js, eventRecord(eventId('complained', orgId, messageId, to), 'complained', orgId, {
    message_id: messageId, to, complained_at: now, feedback_type: report.feedbackType, ...tagsField(subject.tags),
    ...streamField(subject.stream)
  }, messageId, now, environment, domain))
  return 1
}
