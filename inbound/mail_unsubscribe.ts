import { eventId, eventRecord, isBroadcast, streamField, tagsField } from '../protocol/mod.ts'
import { publishEvent, suppressAddress } from '../stores/events/mod.ts'
import { type ControlPlane } from '../stores/control_plane/mod.ts'
import { type JsPublish } from '../stores/clients/mod.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'
import type { MessageAnalysis } from './analysis.ts'
import type { ReportSubject } from './report_checks.ts'

/**
 * The `mailto:` half of `List-Unsubscribe` (RFC 2369) points at the message's return path with
 * `?subject=unsubscribe`; mail clients send exactly that subject. An automatic reply (RFC 3834 sends those to the
 * return path too) carries `Auto-Submitted` or another subject, so it never unsubscribes anyone.
 */
export function isUnsubscribeRequest (m: Pick<MessageAnalysis, 'subject' | 'headers'>): boolean {
  const auto = m.headers['auto-submitted']?.trim().toLowerCase()
  return m.subject.trim().toLowerCase() === 'unsubscribe' && (auto === undefined || auto === 'no')
}

/**
 * Suppresses the recipient the return path was issued for (not for a sandbox message: the sandbox never suppresses)
 * and publishes `unsubscribed` (method `mailto`). The event id is the one the unsubscribe link uses, so a recipient
 * who does both gets one event.
 */
export async function unsubscribeByMail (
  deps: { cp: ControlPlane, js: JsPublish, metrics: OutboxMetrics }, subject: ReportSubject, now = new Date()
): Promise<void> {
  const { orgId, messageId, environment, domain } = subject
  // leaving broadcast mail stops that stream only; leaving transactional mail stops every stream
  const only = isBroadcast(subject.stream) ? subject.stream : undefined
  for (const to of subject.recipients) {
    if (environment === 'live' && await suppressAddress(deps.cp, orgId, to, 'unsubscribe', messageId, only)) {
      deps.metrics.suppressionsAdded.unsubscribe.inc()
    }
    await publishEvent(deps.js, eventRecord(eventId('unsubscribed', orgId, messageId, to), 'unsubscribed', orgId, {
      message_id: messageId, to, unsubscribed_at: now.toISOString(), method: 'mailto', ...tagsField(subject.tags),
      ...streamField(subject.stream)
    }, messageId, now.toISOString(), environment, domain))
  }
}
