import type { RedisTarget } from '../../config/mod.ts'
import type { RecipientOutcome } from './classify.ts'
import type { EgressNote } from '../egress/egress_routes.ts'
import type { LaneRecovery } from '../../stores/egress/mod.ts'
import type { TaskEgress } from '../egress/task_egress.ts'
import type { DestinationClass, SmtpResult } from '../../stores/metrics/mod.ts'

/** What the dispatcher hands a shard's thread, and what comes back. Plain data: it crosses a thread boundary. */

export interface ActorSettings {
  /** One node or a Sentinel set (plain data, so it crosses into the thread). */
  redis: RedisTarget
  relay?: string
  /** `verify`: a relay with credentials (or `smtps://`) only over TLS with a verified certificate; `insecure`: no checks. */
  relayTls: 'verify' | 'insecure'
  /** PEM of the extra CAs verified outbound TLS trusts (`OB_SMTP_CA_FILE`), read once by the main thread. */
  caPem?: string
  /** Port of MTA-STS policy servers (443; tests point it at their own). */
  stsPort: number
  outboundPort: number
  /** MX hosts on non-public addresses are delivered to (else refused: a `domain` bounce that does not suppress). */
  allowPrivate: boolean
  dnsServers: string[]
  poolConnections: number
  hostRatePerS: number
  /** Mail to MX hosts goes through the egress layer (engine/egress/); never mail through the relay. */
  egressShaping: boolean
  /** How long a lane slowed by a reply takes to double its rate back; unset: stores/egress RECOVER_EVERY_MS. */
  egressRecoverEveryMs?: number
  /** How long a connection's slot lasts without renewal; unset: engine/egress HOLD_TTL_MS. */
  egressConnectionHoldMs?: number
  publicUrl: string
  /** Tracking-token key (installationSecret). */
  secret: Uint8Array
  /** The engine's shard fences (engine/leases/fences.ts), shared memory; unset: every shard's mail may always go. */
  fences?: SharedArrayBuffer
  /** How long a transaction whose fence closed may stay in flight before it is taken for stalled and reset. */
  stalledAfterMs?: number
}

export interface TaskMessage {
  id: string
  org_id: string
  from: string
  to: string[]
  cc: string[]
  reply_to?: string
  subject: string
  html?: string
  text?: string
  headers: Record<string, string>
  attachments: Array<{ filename: string, content: string, content_type?: string, content_id?: string }>
  variables?: Record<string, string | number | boolean>
  track_opens: boolean
  track_clicks: boolean
  /** The domain's own return-path host (the envelope sender's), when it had a verified one at acceptance. */
  return_path_host?: string
  /** The domain's own host for the tracking and unsubscribe links, when it had a verified one at acceptance. */
  tracking_host?: string
  /** Mail submitted by SMTP: sent as this MIME (raw_submission.ts) instead of composed from the fields above. */
  submitted?: { raw: string }
}

export interface DeliverTask {
  kind: 'deliver'
  /** The shard whose message this is: no transaction starts once its fence is closed. */
  shard: number
  /** Its subject, html and text are the ones sent: a template message's are rendered already (the main thread renders once). */
  message: TaskMessage
  /** Bare addresses to attempt in this run; each gets its own SMTP transaction (own VERP return path). */
  recipients: string[]
  /** The RSA key signs every message; `ed25519` (RFC 8463) is there once its DNS record was found, and signs too. */
  domain: { id: string, name: string, selector: string, privateKey: string, ed25519?: { selector: string, privateKey: string } }
  /** The return-path key that signs this run's VERP addresses (the newest when the run was handed over). */
  verpKey: { id: string, secret: Uint8Array }
  /** The sources of the message's pool, resolved when the run was handed over; none with shaping off or a relay. */
  egress?: TaskEgress
  /** Providers an operator holds (engine/queue_holds.ts): a recipient found to be at one waits, unattempted. */
  heldProviders?: readonly string[]
}

export interface CloseTask { kind: 'close' }

export type ActorTask = DeliverTask | CloseTask

export interface RecipientResult {
  rcpt: string
  outcome: RecipientOutcome
  /** When the outcome happened (ISO 8601). */
  at: string
  /** The provider of the recipient's domain, when this run looked its MX hosts up for the egress layer. */
  provider?: string
}

/** A final SMTP reply the thread could not write to the delivery state at once, with the failure's code. */
export interface UnrecordedReply { rcpt: string, code: string }

/** One SMTP transaction the thread made, for `outbox_smtp_attempt_duration_seconds` (counted by the main thread). */
export interface SmtpAttemptSample { destination: DestinationClass, result: SmtpResult, seconds: number }

export interface DeliverResult {
  results: RecipientResult[]
  unrecorded?: UnrecordedReply[]
  attempts?: SmtpAttemptSample[]
  /** Lanes whose state a reply changed in this run. */
  egress?: EgressNote[]
  /** Recovery steps of slowed lanes the thread's gates claimed since its last result (each once across the cluster). */
  recovered?: LaneRecovery[]
}
