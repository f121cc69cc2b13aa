import type { JsPublish } from '../stores/clients/mod.ts'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import type { ControlPlane } from '../stores/control_plane/mod.ts'
import { publishEvent, suppressAddress } from '../stores/events/mod.ts'
import { type EventRecord, type FailedData, addressDomain, bareAddress, bounceCategory, type QueuedMessage, renderContent, suppresses } from '../protocol/mod.ts'
import type { RecipientResult, DeliverTask } from './actor/task.ts'
import type { RecipientOutcome } from './actor/classify.ts'
import { DestinationBackoff, backoffSettings, type AttemptVerdict } from './destination_backoff.ts'
import { DUE_EARLY_MS, giveUpAt, nextAttemptAt, spanPassed } from './retry_schedule.ts'
import { templateSource } from './template_source.ts'
import { decodeQueued } from './queued_ingress.ts'
import type { DeliveryState } from './delivery_state.ts'
import type { MessageStore } from '../stores/read_model/mod.ts'
import { DeliveryStateChanges, freshRecipientState, type RecipientState } from './delivery_state_layout.ts'
import { EventFactory } from './events_out.ts'
import { signingDomain } from './signing_keys.ts'
import { sandboxOutcome, SANDBOX_RETRY_SCHEDULE_S, type SandboxResult } from './sandbox.ts'
import type { ShardActors } from './shards.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'
import type { ScheduleState } from '../stores/schedule/mod.ts'
import type { ContentRecorder } from './content_recorder.ts'

/**
 * What the dispatcher does with the JetStream message afterwards. `ack`: the message is done with (every recipient
 * has its final outcome and its event, or it was canceled). `drop`: this copy is acknowledged, but the message goes
 * on in another copy (a rescheduled message has several); nothing that belongs to the message may be removed.
 * There is no termination: a message ends with an event for every recipient, then its acknowledgement.
 */
export type Fate = { kind: 'ack' } | { kind: 'drop' } | { kind: 'nak', delayMs: number }

/** Why a message that is never sent ends `failed` (the event's `failure_category`). */
export type FailureCategory = FailedData['failure_category']

/** Long waits are taken in steps of at most an hour, so a changed schedule or a moved shard takes effect within the hour. */
export const MAX_NAK_MS = 3600_000 // 1 h
const STATE_RETRY_MS = 5_000 // Redis unreachable: try the message again in 5 s, nothing was sent

/** Where a scheduled message stands: go on (due since `dueAt`), or a fate without sending (`waiting`: not due yet). */
type ScheduleStep = { go: true, dueAt?: number } | { go: false, fate: Fate, waiting?: true }

const nak = (delayMs: number): Fate => ({ kind: 'nak', delayMs: Math.max(0, Math.min(MAX_NAK_MS, Math.ceil(delayMs))) })

export interface ProcessorDeps {
  config: Config
  /** Where the delivery events go (OB_EVENTS); publishes resolve on the PubAck. */
  js: JsPublish
  cp: ControlPlane
  state: DeliveryState
  /** The read model, where every delivery makes sure its message is recorded (see `process`). */
  readModel: Pick<MessageStore, 'recordQueued' | 'markCanceled'>
  /**
   * Where the content view of each message is recorded, alongside its read-model record (content_recorder.ts);
   * none when the installation records no content (OB_MESSAGE_CONTENT_RETENTION_DAYS=0).
   */
  content?: Pick<ContentRecorder, 'record'>
  /** Cancels and new times of scheduled messages (stores/schedule), checked right before one is taken up. */
  schedule: ScheduleState
  actors: ShardActors
  log: Logger
  metrics: OutboxMetrics
}

/**
 * One delivery of one JetStream message: skip recipients that are done, attempt the due ones (SMTP in the
 * shard's thread, or the sandbox), record progress, publish events, and say what to do with the message.
 */
export class MessageProcessor {
  /** One per process, shared by all its shards: a destination's mail is spread over every shard. */
  private readonly backoff: DestinationBackoff
  private signingKey?: DeliverTask['verpKey']

  constructor (private readonly d: ProcessorDeps) {
    this.backoff = new DestinationBackoff(backoffSettings(d.config.delivery.retryScheduleS, d.config.smtp.poolConnections))
    d.metrics.read('outbox_destinations_suspended', (set) => { set(this.backoff.suspendedCount()) })
  }

  /**
   * For the work-queue sweep (work_queue_sweep.ts): whether every recipient of a stored message has its final
   * outcome. If so, the final events not yet marked published are published again, as a redelivery would do
   * before its acknowledgement (their ids make JetStream drop copies it already has), and the message may go.
   */
  async settleIfFinal (data: Uint8Array): Promise<boolean> {
    const msg = decodeQueued(data)
    if (typeof msg === 'string') return false
    const recipients = recipientsOf(msg)
    const states = await this.d.state.load(msg.id)
    if (!recipients.every((r) => states.get(r)?.final !== undefined)) return false
    const unpublished = recipients.filter((r) => states.get(r)?.published !== true)
    await this.publish(unpublished.flatMap((r) => states.get(r)!.final!))
    await this.d.state.markPublished(msg.id, unpublished)
    return true
  }

  /** Publishes the events at once and waits for every PubAck. */
  private async publish (events: readonly EventRecord[]): Promise<void> {
    await Promise.all(events.map(async (e) => await publishEvent(this.d.js, e)))
  }

  /**
   * The newest return-path key, as plain data for the shard's thread (a copy of its own: a pooled Buffer would take
   * its whole 8 KB pool across the thread boundary).
   */
  private verpKey (): DeliverTask['verpKey'] {
    const k = this.d.cp.verpKeys.signing()
    if (this.signingKey?.id !== k.id) this.signingKey = { id: k.id, secret: new Uint8Array(k.secret) }
    return this.signingKey
  }

  /**
   * The gateway records an accepted message in the read model after its 202, a few milliseconds later; a gateway
   * that died in between left no record, and the message would never be readable. Recording is idempotent (a
   * recorded message is left as it is, its status and counts included), so every delivery records it again from
   * the queued message. Redis being away is not a reason to hold the message: the next delivery records it.
   */
  private async recordReadable (msg: QueuedMessage, now: number): Promise<void> {
    const scheduled = msg.scheduled_at !== undefined && Date.parse(msg.scheduled_at) > now
    try {
      await this.d.readModel.recordQueued(msg, scheduled ? 'scheduled' : 'queued')
    } catch (err) {
      this.d.log.warn({ err, message_id: msg.id }, 'recording the message in the read model failed; the next delivery records it')
    }
  }

  /**
   * A scheduled message is taken up only through the schedule state's atomic step: a cancel that won is seen
   * here and the message is dropped unsent; a new time replaces the queued one. A scheduled wait is not an
   * attempt: nothing is recorded and the status stays `scheduled`. `go`: take the message up now; `dueAt` is the
   * time it became due (a reschedule's, else its `scheduled_at`), from which its retry span counts.
   */
  private async scheduleStep (msg: QueuedMessage, seq: number): Promise<ScheduleStep> {
    if (msg.scheduled_at === undefined) return { go: true }
    let verdict
    try {
      verdict = await this.d.schedule.take(msg.id, seq, Date.parse(msg.scheduled_at), Date.now())
    } catch (err) {
      this.d.log.warn({ err, message_id: msg.id }, 'schedule state unavailable; message handed back')
      return { go: false, fate: nak(STATE_RETRY_MS) }
    }
    switch (verdict.kind) {
      case 'taken': return { go: true, dueAt: verdict.dueAt }
      // another copy (published by a reschedule to an earlier time) carries the message on
      case 'duplicate': return { go: false, fate: { kind: 'drop' } }
      case 'wait': return { go: false, fate: nak(verdict.at - Date.now()), waiting: true }
      case 'canceled':
        // the gateway shows it canceled after the cancel; doing it again here covers a gateway that died in between
        await this.d.readModel.markCanceled(msg.org_id, msg.id).catch((err: unknown) => {
          this.d.log.warn({ err, message_id: msg.id }, 'marking a canceled message in the read model failed')
        })
        return { go: false, fate: { kind: 'ack' } }
    }
  }

  /**
   * Ends a readable message that can never be sent (its stored content is gone or does not match): every
   * recipient without a final outcome gets `failed` with `category` and `reason` (a reply a crashed run received
   * is recorded instead), then the message is acknowledged. A canceled message, or a copy another one carries on,
   * ends as it would have anyway. A scheduled message not yet due ends now: waiting could not make it sendable.
   */
  async endUnsendable (msg: QueuedMessage, seq: number, category: FailureCategory, reason: string): Promise<Fate> {
    await this.recordReadable(msg, Date.now())
    const step = await this.scheduleStep(msg, seq)
    if (!step.go && step.waiting !== true) return step.fate
    let states: Map<string, RecipientState>
    try {
      states = await this.d.state.load(msg.id)
    } catch (err) {
      this.d.log.warn({ err, message_id: msg.id }, 'delivery state unavailable; message handed back')
      return nak(STATE_RETRY_MS)
    }
    const st = (r: string): RecipientState => states.get(r) ?? freshRecipientState()
    const recipients = recipientsOf(msg)
    await this.publishRecorded(msg.id, recipients, st)
    const pending = recipients.filter((r) => st(r).final === undefined)
    if (pending.length === 0) return { kind: 'ack' }
    const at = new Date().toISOString()
    const results = pending.map((rcpt) => st(rcpt).sent ?? { rcpt, at, outcome: { kind: 'failed' as const, category, reason } })
    return await this.record(msg, this.eventFactory(msg), results, st, new Map(), pending, undefined)
  }

  /** Final events recorded by an earlier delivery that crashed before publishing them. */
  private async publishRecorded (id: string, recipients: string[], st: (r: string) => RecipientState): Promise<void> {
    const unpublished = recipients.filter((r) => st(r).final !== undefined && !st(r).published)
    if (unpublished.length === 0) return
    await this.publish(unpublished.flatMap((r) => st(r).final!))
    await this.d.state.markPublished(id, unpublished)
  }

  private eventFactory (msg: QueuedMessage): EventFactory {
    const template = templateSource(msg)
    return new EventFactory(msg, template !== undefined ? renderContent(template, msg.variables ?? {}).subject : msg.subject)
  }

  /**
   * `deliveryCount` is JetStream's: on the first delivery of a stream message there is no state to read. `seq` is
   * the stream sequence of this copy of the message (a rescheduled message may have several; one is sent).
   */
  async process (shard: number, data: Uint8Array, deliveryCount = 2, seq = 0): Promise<Fate> {
    const msg = decodeQueued(data)
    if (typeof msg === 'string') return this.unreadable(seq, msg)
    // The content view (content_recorder.ts) is recorded beside the delivery, never ahead of it: a slow JetStream
    // (a restart, say) must not hold the SMTP send past the consumer's ack_wait, where a second copy of the message
    // would be sent. It is awaited before the message's fate is given, so a message is acknowledged only once its
    // content is recorded or the recording failed and was logged (record never throws).
    const content = this.d.content?.record(msg, deliveryCount)
    try {
      return await this.processReadable(shard, msg, deliveryCount, seq)
    } finally {
      await content
    }
  }

  /**
   * A stream message this engine cannot read is never ended here: it may come from a newer engine (a format this
   * one does not know), or its owner cannot be told. It is handed back for an hour, counted and logged each time.
   */
  private unreadable (seq: number, problem: string): Fate {
    this.d.metrics.outboundUnreadable.inc()
    this.d.log.error({ seq, problem }, 'outbound message this engine cannot read; handed back for a newer engine')
    return { kind: 'nak', delayMs: MAX_NAK_MS }
  }

  private async processReadable (shard: number, msg: QueuedMessage, deliveryCount: number, seq: number): Promise<Fate> {
    await this.recordReadable(msg, Date.now())
    const step = await this.scheduleStep(msg, seq)
    if (!step.go) return step.fate
    const now = Date.now()
    const recipients = recipientsOf(msg)
    let states = new Map<string, RecipientState>()
    try {
      if (deliveryCount > 1) states = await this.d.state.load(msg.id)
    } catch (err) {
      this.d.log.warn({ err, message_id: msg.id }, 'delivery state unavailable; message handed back')
      return nak(STATE_RETRY_MS)
    }
    const st = (r: string): RecipientState => states.get(r) ?? freshRecipientState()
    await this.publishRecorded(msg.id, recipients, st)
    const pending = recipients.filter((r) => st(r).final === undefined)
    if (pending.length === 0) return { kind: 'ack' }
    // replies a crashed run received but did not turn into events: use them, never send again
    const recovered = pending.filter((r) => st(r).sent !== undefined).map((r) => st(r).sent!)
    const due = pending.filter((r) => st(r).sent === undefined && st(r).notBefore <= now + DUE_EARLY_MS)
    if (due.length === 0 && recovered.length === 0) return nak(Math.min(...pending.map((r) => st(r).notBefore)) - now)

    const template = templateSource(msg)
    const domain = this.d.cp.domain(msg.org_id, msg.domain_id)
    const events = this.eventFactory(msg)
    let results: RecipientResult[] = []
    const followUps = new Map<string, SandboxResult['followUp']>()
    if (domain === undefined) {
      const reason = `the sending domain ${msg.domain_id} no longer exists`
      const at = new Date().toISOString()
      results = pending.filter((r) => st(r).sent === undefined).map((rcpt) => ({ rcpt, at, outcome: { kind: 'failed', category: 'domain_removed', reason } }))
    } else if (due.length === 0) {
      // only recovered replies to record
    } else if (msg.environment === 'test') {
      const html = template !== undefined ? renderContent(template, msg.variables ?? {}).html : msg.html
      results = due.map((rcpt) => {
        const at = new Date().toISOString()
        const r = sandboxOutcome(rcpt, html, this.d.config.http.publicUrl, at)
        followUps.set(rcpt, r.followUp)
        return { rcpt, at, outcome: r.outcome }
      })
    } else {
      const giveUp = giveUpAt(msg, this.d.config.delivery.retryScheduleS, step.dueAt)
      const admitted = await this.admit(due, spanPassed(Date.now(), giveUp), (r) => st(r).attempts > 0)
      results = admitted.notAttempted
      if (admitted.attempt.length > 0) {
        const task: DeliverTask = {
          kind: 'deliver',
          message: msg,
          recipients: admitted.attempt,
          domain: signingDomain(domain),
          verpKey: this.verpKey()
        }
        if (template !== undefined) task.template = template
        let sent: RecipientResult[]
        try {
          const attempted = await this.d.actors.deliver(shard, task)
          sent = attempted.results
          for (const u of attempted.unrecorded ?? []) {
            this.d.log.warn({ message_id: msg.id, recipient: u.rcpt, code: u.code }, 'SMTP reply not recorded when it arrived; a crash before the delivery state is saved would send again')
          }
        } catch (err) {
          for (const r of admitted.attempt) this.backoff.record(addressDomain(r), 'unknown')
          throw err
        }
        for (const r of sent) {
          const dest = addressDomain(r.rcpt)
          if (this.backoff.record(dest, verdictOf(r.outcome), r.outcome.kind === 'deferred' ? r.outcome.response : '')) {
            this.d.metrics.destinationSuspensions.inc()
            this.d.log.warn({ destination: dest, response: r.outcome.kind === 'deferred' ? r.outcome.response : '' }, 'destination answers only 4xx; attempts suspended')
          }
        }
        results.push(...sent)
      }
    }
    return await this.record(msg, events, [...recovered, ...results], st, followUps, pending, step.dueAt)
  }

  /**
   * Splits due recipients by their destination's backoff. A recipient at a suspended destination waits for the
   * destination's next probe like a throttled one: no event, no attempt used up, since no answer can change before
   * then. Once the message's span has passed (`overdue`), one that was really attempted before gives up at such a
   * turn, with the destination's last reply, and one never attempted gets its one real attempt despite the
   * suspension (within the destination's cap), so that no recipient waits for probes for ever and none gives up
   * untried. One at a destination still busy with its capped attempts waits too.
   */
  private async admit (due: string[], overdue: boolean, tried: (rcpt: string) => boolean): Promise<{ attempt: string[], notAttempted: RecipientResult[] }> {
    const attempt: string[] = []
    const notAttempted: RecipientResult[] = []
    const taken = new Set<string>()
    for (const rcpt of due) {
      const dest = addressDomain(rcpt)
      // a second recipient at one destination must not wait for the slot the first one holds
      const a = await this.backoff.admit(dest, !taken.has(dest), overdue && !tried(rcpt))
      const at = new Date().toISOString()
      if (a.kind === 'attempt') {
        attempt.push(rcpt)
        taken.add(dest)
      } else if (a.kind === 'busy') {
        notAttempted.push({ rcpt, at, outcome: { kind: 'throttled', retryAfterMs: a.retryAfterMs } })
      } else if (overdue) {
        const response = `${a.lastResponse} (not attempted: ${dest} answered only 4xx lately)`
        notAttempted.push({ rcpt, at, outcome: { kind: 'deferred', response } })
      } else {
        notAttempted.push({ rcpt, at, outcome: { kind: 'throttled', retryAfterMs: Math.max(0, a.probeAt - Date.parse(at)) } })
      }
    }
    return { attempt, notAttempted }
  }

  private async record (msg: QueuedMessage, events: EventFactory, results: RecipientResult[], st: (r: string) => RecipientState,
    followUps: Map<string, SandboxResult['followUp']>, pending: string[], dueAt: number | undefined): Promise<Fate> {
    const schedule = msg.environment === 'test' ? SANDBOX_RETRY_SCHEDULE_S : this.d.config.delivery.retryScheduleS
    const giveUp = giveUpAt(msg, schedule, dueAt)
    const changes = new DeliveryStateChanges()
    const toPublish: EventRecord[] = []
    const finals: string[] = []
    const suppress: Array<{ email: string, reason: 'hard_bounce' | 'complaint' }> = []
    const waits = new Map<string, number>()
    // a message queued before environments existed is live
    const environment = msg.environment === 'test' ? 'test' : 'live'
    const counted = this.d.metrics.deliveryOutcomes[environment]
    const bounces = this.d.metrics.bounces[environment]
    for (const { rcpt, at, outcome } of results) {
      const atMs = Date.parse(at)
      const attempt = st(rcpt).attempts + 1
      let final: EventRecord[] | undefined
      switch (outcome.kind) {
        case 'delivered': {
          final = [events.make('delivered', rcpt, at, { delivered_at: at, smtp_response: outcome.response })]
          const f = followUps.get(rcpt)
          if (f !== undefined) final.push(events.make(f.type, rcpt, f.at, f.fields))
          if (f?.type === 'complained') suppress.push({ email: rcpt, reason: 'complaint' })
          counted.delivered.inc()
          if (f?.type === 'complained') this.d.metrics.complaints[environment].inc()
          break
        }
        case 'bounced': {
          const category = bounceCategory({ code: outcome.code, text: outcome.message })
          final = [events.make('bounced', rcpt, at, { bounce_type: 'hard', bounce_code: outcome.code, bounce_message: outcome.message, bounce_category: category, bounced_at: at })]
          if (outcome.suppress !== false && suppresses(category)) suppress.push({ email: rcpt, reason: 'hard_bounce' })
          counted.bounced.inc()
          bounces.hard[category].inc()
          break
        }
        case 'failed':
          final = [events.make('failed', rcpt, at, { failed_at: at, failure_category: outcome.category, reason: outcome.reason })]
          counted.failed.inc()
          break
        case 'deferred':
          if (!spanPassed(atMs, giveUp)) {
            const next = nextAttemptAt(atMs, attempt, schedule)
            toPublish.push(events.make('deferred', rcpt, at, {
              deferred_at: at, smtp_response: outcome.response, attempt, next_attempt_at: new Date(next).toISOString()
            }, attempt))
            changes.deferred(rcpt, attempt, next)
            waits.set(rcpt, next)
            counted.deferred.inc()
          } else {
            const code = /^[45]\d\d/.exec(outcome.response)?.[0] ?? '421'
            const category = bounceCategory({ code, text: outcome.response })
            final = [events.make('bounced', rcpt, at, { bounce_type: 'soft', bounce_code: code, bounce_message: outcome.response, bounce_category: category, bounced_at: at })]
            counted.bounced.inc()
            bounces.soft[category].inc()
          }
          break
        case 'throttled': {
          const until = Date.now() + outcome.retryAfterMs
          changes.notBefore(rcpt, until)
          waits.set(rcpt, until)
          break
        }
      }
      if (final !== undefined) {
        changes.final(rcpt, final)
        toPublish.push(...final)
        finals.push(rcpt)
      }
    }
    try {
      await this.d.state.save(msg.id, changes)
    } catch (err) {
      // the outcomes happened; publish them anyway. Only a redelivery of this message could now repeat a send.
      this.d.log.error({ err, message_id: msg.id }, 'delivery state not saved')
    }
    await this.suppress(msg, suppress)
    await this.publish(toPublish)
    const done = new Set(finals)
    const left = pending.filter((r) => !done.has(r))
    // once acknowledged the message is not delivered again, so only a message that comes back needs the mark
    if (left.length === 0) return { kind: 'ack' }
    await this.d.state.markPublished(msg.id, finals).catch(() => {})
    return nak(Math.min(...left.map((r) => waits.get(r) ?? st(r).notBefore)) - Date.now())
  }

  /**
   * Hard bounces of the mailbox and domain categories put the address on the organisation's suppression list; an
   * address already on it keeps its first entry. Sandbox outcomes never do: the sandbox simulates events, not list
   * state, so a simulated bounce or complaint cannot block live mail.
   */
  private async suppress (msg: QueuedMessage, entries: Array<{ email: string, reason: 'hard_bounce' | 'complaint' }>): Promise<void> {
    if (msg.environment === 'test') return
    await Promise.all(entries.map(async ({ email, reason }) => {
      await suppressAddress(this.d.cp, msg.org_id, email, reason, msg.id)
        .then((added) => { if (added) this.d.metrics.suppressionsAdded[reason].inc() })
        .catch((err: unknown) => this.d.log.error({ err, email }, 'suppression not stored'))
    }))
  }
}

function recipientsOf (msg: QueuedMessage): string[] {
  return [...new Set([...msg.to, ...msg.cc, ...msg.bcc].map(bareAddress))]
}

/** What an attempt's outcome says about its destination: only a 4xx or a failed connection counts against it. */
function verdictOf (o: RecipientOutcome): AttemptVerdict {
  if (o.kind === 'deferred') return 'transient'
  if (o.kind === 'delivered' || o.kind === 'bounced') return 'answered'
  return 'unknown'
}
