import type { Logger } from 'pino'
import { decodeVerp, verpRecipient, type VerpAddress } from '../protocol/mod.ts'
import { type ControlPlane } from '../stores/control_plane/mod.ts'
import { type MessageRecipients } from '../stores/read_model/mod.ts'
import { ownMessageId, type Report } from './reports.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'

/**
 * Which message, organisation and recipient a bounce, complaint or mailed unsubscribe may act on. A report acts
 * only on a message that exists, of the organisation that received the report, and only on the recipient the
 * return path was issued for (VERP). Through a route, the report names the message by its Message-ID, and the
 * recipient must be proven the same way: by a VERP address of that message in the original's Return-Path or
 * List-Unsubscribe, or by being the message's only recipient; so one recipient of a message can never report
 * another. Anything else is dropped: counted, with one warning line, and never suppressing.
 */
export type DropReason =
  /** The VERP tag names a key that does not exist (never issued, or retired). */
  | 'unknown_key'
  /** The VERP tag does not verify for any recipient of the message: forged or altered. */
  | 'forged_tag'
  /** No message has the id (never sent here, or older than the read model keeps messages). */
  | 'unknown_message'
  /** The message belongs to another organisation than the one the report reached. */
  | 'other_organisation'
  /** A report through a route whose original Message-ID is not one of ours. */
  | 'not_our_message'
  /** The report names a recipient other than the one the address was issued for, or none of the message's. */
  | 'recipient_mismatch'
  /** Mail to a bounce address that could not be read however often it was tried. */
  | 'unreadable'

export const DROP_REASONS: readonly DropReason[] = [
  'unknown_key', 'forged_tag', 'unknown_message', 'other_organisation', 'not_our_message', 'recipient_mismatch', 'unreadable'
]

/** Drops a report: counted in `outbox_inbound_reports_dropped_total{reason}`, and one warning each. */
export class ReportDrops {
  constructor (private readonly log: Logger, private readonly metrics: OutboxMetrics) {}

  drop (reason: DropReason, fields: Record<string, unknown>): void {
    this.metrics.reportsDropped[reason].inc()
    // one line of the security log (docs/security.md): a dropped report is most often a forgery
    this.log.warn(
      { kind: 'security', event: 'report.dropped', ...fields, reason }, 'report dropped: it acts on no message and recipient of ours'
    )
  }
}

/** The read model's view of a sent message (MessageStore.messageRecipients). */
export interface MessageLookup {
  messageRecipients: (id: string) => Promise<MessageRecipients | undefined>
}

/** What a report may act on: one message of one organisation, and the recipients it may name. */
export interface ReportSubject {
  orgId: string
  messageId: string
  /** Bare, lower-cased. */
  recipients: readonly string[]
  /** The message's tags, echoed in the events the report leads to. */
  tags?: readonly string[]
  /**
   * The message's environment. A report about a sandbox message (one the organisation mailed itself, since sandbox
   * mail is never sent) leads to sandbox events and never suppresses, like the sandbox's own simulated outcomes.
   */
  environment: 'live' | 'test'
  /** The message's sending domain, carried by the events the report leads to (webhook filters). */
  domain?: string
  /** The message's stream: a complaint about broadcast mail suppresses the address for that stream only. */
  stream?: string
}

export interface CheckDeps { cp: ControlPlane, messages: MessageLookup, drops: ReportDrops }

/** `inboundId`: the id the inbound message got, for the log line. */
async function messageOf (deps: CheckDeps, messageId: string, orgId: string, inboundId: string): Promise<MessageRecipients | undefined> {
  const msg = await deps.messages.messageRecipients(messageId)
  if (msg === undefined) deps.drops.drop('unknown_message', { id: inboundId, message_id: messageId })
  else if (msg.orgId !== orgId) deps.drops.drop('other_organisation', { id: inboundId, message_id: messageId, org_id: orgId })
  else return msg
  return undefined
}

/** Mail to a VERP address: the recipient is the one whose tag verifies under the key the address names. */
export async function checkVerp (deps: CheckDeps, verp: VerpAddress, orgId: string, inboundId: string): Promise<ReportSubject | undefined> {
  const key = deps.cp.verpKeys.key(verp.keyId)
  if (key === undefined) {
    deps.drops.drop('unknown_key', { id: inboundId, message_id: verp.messageId, key_id: verp.keyId })
    return undefined
  }
  const msg = await messageOf(deps, verp.messageId, orgId, inboundId)
  if (msg === undefined) return undefined
  const recipient = verpRecipient(verp, key, msg.recipients)
  if (recipient === undefined) {
    deps.drops.drop('forged_tag', { id: inboundId, message_id: verp.messageId, org_id: orgId })
    return undefined
  }
  return { orgId, messageId: verp.messageId, recipients: [recipient], tags: msg.tags, environment: msg.environment, domain: msg.domain,
    stream: msg.stream }
}

/** A report through a route: the original Message-ID must be one of ours, of the route's organisation. */
export async function checkRouted (deps: CheckDeps, report: Report, orgId: string, inboundId: string): Promise<ReportSubject | undefined> {
  const own = ownMessageId(report.originalMessageId)
  if (own === undefined) {
    deps.drops.drop('not_our_message', { id: inboundId, org_id: orgId, original_message_id: report.originalMessageId ?? null })
    return undefined
  }
  const msg = await messageOf(deps, own.messageId, orgId, inboundId)
  if (msg === undefined) return undefined
  const recipients = provenRecipients(deps, report, own.messageId, msg.recipients)
  return {
    orgId, messageId: own.messageId, recipients, tags: msg.tags, environment: msg.environment, domain: msg.domain, stream: msg.stream
  }
}

/**
 * The recipients a routed report about `messageId` may name: the one a VERP address of this message in the
 * original's headers was issued for; else, without one, the message's recipient when it had only one; else none
 * (every recipient the report names is then dropped as `recipient_mismatch`).
 */
function provenRecipients (deps: CheckDeps, report: Report, messageId: string, recipients: readonly string[]): readonly string[] {
  for (const address of report.originalReturnPaths ?? []) {
    const verp = decodeVerp(address)
    if (verp === undefined || verp.messageId !== messageId) continue
    const key = deps.cp.verpKeys.key(verp.keyId)
    const recipient = key === undefined ? undefined : verpRecipient(verp, key, recipients)
    if (recipient !== undefined) return [recipient]
  }
  return recipients.length === 1 ? recipients : []
}
