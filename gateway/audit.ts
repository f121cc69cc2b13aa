import type { Logger } from 'pino'
import type { AuditLog, AuditRecord } from '../stores/audit/mod.ts'
import type { OperatorRequestContext, Reply, RequestContext, RouteDef } from './http/route.ts'
import { auditEntryOf } from './audit_entry.ts'
import type { SecurityLog } from './security_log.ts'
import { securityLineOf } from './audit_security.ts'

/**
 * The audit log's side of the request pipeline: a route that declares `audit` has one entry recorded after its
 * 2xx, before the answer goes out. The change is already made then (its id is in the answer), so a failed write
 * does not turn the answer into an error a client would retry: it counts `outbox_audit_unrecorded_total` and
 * writes the whole entry to the process log as `audit.unrecorded`, so no change goes unrecorded silently.
 */

/**
 * Routes that change data and are no change to configuration, so are not audited; a test walks the route table
 * and finds every `post`, `patch`, `put` and `del` route either declaring `audit` or here, with the reason.
 */
export const AUDIT_EXEMPT: Readonly<Record<string, string>> = {
  // Mail: what an organisation sends, not how it is configured; events and the read API record it.
  'POST /v1/messages/send': 'sending mail',
  'POST /v1/messages/batch': 'sending mail',
  'POST /v1/messages/analyze': 'an analysis of content; stores nothing',
  'POST /v1/messages/:id/cancel': 'a scheduled message\'s fate; its events record it',
  'PATCH /v1/messages/:id': 'a scheduled message\'s new time; its events record it',
  // Tracking: the recipient's unsubscribe, recorded as an `unsubscribed` event and a suppression with its reason.
  'POST /t/u/:token': 'a recipient\'s one-click unsubscribe, recorded as an event',
  // Webhook deliveries: the webhook's configuration does not change; the delivery log records the attempts.
  'POST /v1/webhooks/:id/test': 'a test delivery; the delivery log records it',
  'POST /v1/webhooks/:id/replay': 'delivers an event again; the delivery log records it',
  'POST /v1/webhooks/:id/recover': 'delivers missed events again; the delivery log records it',
  // Waiting mail: the operator's hold, release, retry and bounce are on the security log (operator.queue_changed).
  'POST /v1/operator/queues/hold': 'waiting mail, not configuration; on the security log',
  'POST /v1/operator/queues/release': 'waiting mail, not configuration; on the security log',
  'POST /v1/operator/queues/retry': 'waiting mail, not configuration; on the security log',
  'POST /v1/operator/queues/bounce': 'waiting mail, not configuration; on the security log'
}

export { emptyNote, routeLabel } from './audit_entry.ts'

type AnyContext = RequestContext & OperatorRequestContext

/** The entry a route's 2xx answer makes; undefined when the route declares none or the answer is no change. */
export function auditRecordOf (def: RouteDef, ctx: AnyContext, reply: Reply): AuditRecord | undefined {
  const decl = def.audit
  const note = ctx.audit
  if (decl === undefined || note.skip === true) return undefined
  if ((reply.status < 200 || reply.status > 299) && note.partial !== true) return undefined
  if (decl.statuses !== undefined && !decl.statuses.includes(reply.status) && note.partial !== true) return undefined
  const operator = def.permission === 'operator'
  return auditEntryOf(def, decl, { params: ctx.params, body: ctx.body, reply: reply.body }, note, {
    actor: operator ? { type: 'operator', id: ctx.operator.key.id } : { type: 'api_key', id: ctx.auth.key.id },
    address: ctx.ip,
    requestId: ctx.requestId,
    ...(operator ? {} : { orgId: ctx.auth.org.id })
  })
}

/** Where an entry goes, and where a failure to write it shows. */
export interface AuditSink {
  audit: AuditLog
  /** The security log: the changes it lists get their line from the same entry. */
  security: SecurityLog
  unrecorded: { inc: () => void }
  log: Logger
}

/**
 * Records the entry of a route's answer, if it makes one. A failure, to build the entry or to store it, is counted
 * and logged with what is known of the entry, never thrown: the change is made (see the module's comment).
 */
export async function recordChange (sink: AuditSink, def: RouteDef, ctx: AnyContext, reply: Reply): Promise<void> {
  if (def.audit === undefined) return
  let entry: AuditRecord | undefined
  try {
    entry = auditRecordOf(def, ctx, reply)
    if (entry === undefined) return
    securityLineOf(sink.security, entry, def.permission === 'operator' ? ctx.operator : undefined)
    await sink.audit.record(entry)
  } catch (err) {
    sink.unrecorded.inc()
    const known = entry ?? { action: ctx.audit.action ?? def.audit.action, request_id: ctx.requestId, address: ctx.ip }
    sink.log.error({ kind: 'security', event: 'audit.unrecorded', err, entry: known }, 'audit.unrecorded')
  }
}
