import type { RecipientEventFields } from '../protocol/mod.ts'
import type { RecipientOutcome } from './actor/classify.ts'
import { rewriteHtml } from './actor/tracking.ts'

/**
 * Sandbox (`ob_test_` keys): nothing is sent; the recipient's local part (before any `+tag`) decides.
 *   bounce     → bounced hard (550)
 *   softbounce → deferred, retried after SANDBOX_RETRY_SCHEDULE_S, then bounced soft
 *   complaint  → delivered, then complained (feedback_type "abuse")
 *   open       → delivered, then opened
 *   click      → delivered, then clicked (the first link of the html, else the public URL)
 *   otherwise  → delivered
 */
export const SANDBOX_RETRY_SCHEDULE_S: readonly number[] = [2] // one deferral, 2 s later the soft bounce
export const SANDBOX_USER_AGENT = 'Outbox-Sandbox'
export const SANDBOX_IP = '127.0.0.1'

/** A simulated event that follows the delivery: its type, when it happens and its fields. */
export interface FollowUp<T extends 'complained' | 'opened' | 'clicked'> { type: T, at: string, fields: RecipientEventFields[T] }

export interface SandboxResult {
  outcome: RecipientOutcome
  followUp?: FollowUp<'complained'> | FollowUp<'opened'> | FollowUp<'clicked'>
}

function localPart (rcpt: string): string {
  return rcpt.slice(0, rcpt.lastIndexOf('@')).split('+')[0]!.toLowerCase()
}

function firstLink (html: string | undefined): string | undefined {
  if (html === undefined) return undefined
  let first: string | undefined
  rewriteHtml(html, { clickUrl: (u) => { first ??= u; return u } })
  return first
}

export function sandboxOutcome (rcpt: string, html: string | undefined, publicUrl: string, deliveredAt: string): SandboxResult {
  // Engagement happens after delivery: stamping it a millisecond later keeps every timeline in that order.
  const at = new Date(Date.parse(deliveredAt) + 1).toISOString()
  const accepted: RecipientOutcome = { kind: 'delivered', response: '250 2.0.0 Sandbox: accepted, not sent' }
  switch (localPart(rcpt)) {
    case 'bounce': return { outcome: { kind: 'bounced', code: '550', message: '550 5.1.1 Sandbox: simulated hard bounce' } }
    case 'softbounce': return { outcome: { kind: 'deferred', response: '451 4.2.0 Sandbox: simulated temporary failure' } }
    case 'complaint': return {
      outcome: accepted,
      followUp: { type: 'complained', at, fields: { complained_at: at, feedback_type: 'abuse' } }
    }
    case 'open': return {
      outcome: accepted,
      followUp: { type: 'opened', at, fields: { opened_at: at, user_agent: SANDBOX_USER_AGENT, ip_address: SANDBOX_IP } }
    }
    case 'click': return {
      outcome: accepted,
      followUp: {
        type: 'clicked',
        at,
        fields: { clicked_at: at, url: firstLink(html) ?? `${publicUrl}/`, user_agent: SANDBOX_USER_AGENT, ip_address: SANDBOX_IP }
      }
    }
    default: return { outcome: accepted }
  }
}
