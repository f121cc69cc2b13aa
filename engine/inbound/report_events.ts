import type { Logger } from 'pino'
import {
  eventId, eventRecord, publishEvent, suppressAddress, verpMatches, type ControlPlane, type VerpAddress, type JsPublish
} from '../protocol/mod.ts'
import { bounceCode, ownMessageId, type Report } from './reports.ts'
import { bounceCategory, suppresses } from '../actor/classify.ts'

/** Where a report arrived: a VERP address (message and recipient hash known) or a route of this organisation. */
export type ReportTarget = { kind: 'verp', verp: VerpAddress, orgId: string } | { kind: 'route', orgId: string }

export interface ReportDeps { cp: ControlPlane, js: JsPublish, log: Logger }

function orgOfDomain (cp: ControlPlane, domain: string): string | undefined {
  return cp.domainNames.get(domain)?.split('.')[0]
}

/**
 * Turns a DSN into `bounced` (5.x.x hard, 4.x.x soft; its category from the same classifier as SMTP replies, and
 * only a hard `mailbox` or `domain` bounce suppresses) and an ARF report into `complained` (and suppression). Reports that name no message of ours, or whose recipient does not match the VERP hash, are
 * dropped: they are either not ours or forged.
 */
export async function emitReportEvents (deps: ReportDeps, report: Report, target: ReportTarget): Promise<number> {
  const own = ownMessageId(report.originalMessageId)
  const messageId = target.kind === 'verp' ? target.verp.messageId : own?.messageId
  if (messageId === undefined) return 0
  // Outside VERP, the Message-ID's domain says whose message it was; it must be the receiving route's organisation.
  if (target.kind === 'route' && (own === undefined || orgOfDomain(deps.cp, own.domain) !== target.orgId)) return 0
  const orgId = target.orgId
  const now = new Date().toISOString()
  let emitted = 0
  if (report.kind === 'dsn') {
    for (const r of report.recipients) {
      const to = target.kind === 'verp' ? r.addresses.find((a) => verpMatches(target.verp, a)) : r.addresses[0]
      if (to === undefined) { deps.log.warn({ message_id: messageId }, 'DSN recipient does not match the VERP address'); continue }
      const cls = r.status[0]
      if (cls !== '5' && cls !== '4') continue // 2.x.x: delivered/relayed notices are not bounces
      const hard = cls === '5'
      const code = bounceCode(r)
      const category = bounceCategory({ code: /^\d{3}$/.test(code) ? code : '', enhanced: r.status, text: r.diagnostic.replace(/^\s*smtp\s*;\s*/i, '') })
      if (hard && suppresses(category)) await suppressAddress(deps.cp, orgId, to, 'hard_bounce', messageId)
      await publishEvent(deps.js, eventRecord(eventId('bounced', orgId, messageId, to, 'dsn'), 'bounced', orgId, {
        message_id: messageId,
        to,
        bounce_type: hard ? 'hard' : 'soft',
        bounce_code: code,
        bounce_message: r.diagnostic.replace(/^\s*smtp\s*;\s*/i, '') || `${r.action} ${r.status}`.trim(),
        bounce_category: category,
        bounced_at: now
      }, messageId))
      emitted++
    }
    return emitted
  }
  const candidates = [report.originalRecipient, report.originalTo].filter((a): a is string => a !== undefined)
  const to = target.kind === 'verp' ? candidates.find((a) => verpMatches(target.verp, a)) : candidates[0]
  if (to === undefined) { deps.log.warn({ message_id: messageId }, 'feedback report names no recipient of ours'); return 0 }
  await suppressAddress(deps.cp, orgId, to, 'complaint', messageId)
  await publishEvent(deps.js, eventRecord(eventId('complained', orgId, messageId, to), 'complained', orgId, {
    message_id: messageId, to, complained_at: now, feedback_type: report.feedbackType
  }, messageId))
  return 1
}
