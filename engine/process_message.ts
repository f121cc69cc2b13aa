import type { JsPublish } from '../stores/clients/mod.ts'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import type { ControlPlane } from '../stores/control_plane/mod.ts'
import { publishEvent, suppressAddress } from '../stores/events/mod.ts'
import type { EventRecord, FailedData, QueuedMessage } from '../protocol/mod.ts'
import type { RecipientResult } from './actor/task.ts'
import { giveUpAt, spanPassed } from './retry_schedule.ts'
import { decodeQueued, readQueued, type QueuedIntake } from './queued_ingress.ts'
import type { DeliveryState } from './delivery_state.ts'
import type { MessageStore } from '../stores/read_model/mod.ts'
import type { RecipientState } from './delivery_state_layout.ts'
import { EventFactory } from './events_out.ts'
import type { SandboxResult } from './sandbox.ts'
import type { ShardActors } from './shards.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'
import type { ScheduleState } from '../stores/schedule/mod.ts'
import type { ContentRecorder } from './content_recorder.ts'
import { MAX_NAK_MS, STATE_RETRY_MS, nak, type Fate } from './processing/fate.ts'
import {
  attemptRoute, failedResults, messageStep, planRecipients, recipientsOf, unsendableResults, type RecipientPlan
} from './processing/delivery_plan.ts'
import {
  MOVED_RETRY_MS, classifyOutcomes, resumeAt, retryScheduleOf, type OutcomeCount, type OutcomeEffects
} from './processing/outcomes.ts'
import { renderedContent, withContent } from './processing/rendered_content.ts'
import { DeliveryAttempts } from './processing/attempts.ts'
import { MessageIntake } from './processing/intake.ts'
import { QueueGate, wakeOf } from './queue_holds.ts'
import type { QueueIndex } from '../stores/queues/mod.ts'
import { NewerFormatHandback } from './processing/newer_format.ts'
import type { ShardFences } from './leases/fences.ts'

export { MAX_NAK_MS, type Fate }

/** Why a message that is never sent ends `failed` (the event's `failure_category`). */
export type FailureCategory = FailedData['failure_category']

export interface ProcessorDeps {
  config: Config
  /** Where the delivery events go (OB_EVENTS); publishes resolve on the PubAck. */
  js: JsPublish
  cp: ControlPlane
  state: DeliveryState
  /** The read model, where every delivery makes sure its message is recorded (processing/intake.ts). */
  readModel: Pick<MessageStore, 'recordQueued' | 'markCanceled' | 'recordSent'>
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
  /** The index of waiting mail the operator's queue API lists (stores/queues/). */
  queueIndex: QueueIndex
  /** Whether this process may still act for a shard (engine/leases/fences.ts); unset: always. */
  fences?: Pick<ShardFences, 'open'>
}

/**
 * One delivery of one JetStream message: skip recipients that are done, attempt the due ones (SMTP in the
 * shard's thread, or the sandbox), record progress, publish events, and say what to do with the message.
 *
 * This class is the shell that does the I/O: it reads the delivery and schedule state, sends through the
 * attempts (processing/attempts.ts), writes state, publishes events and suppressions. What to do with each
 * recipient is decided by processing/delivery_plan.ts, what the outcomes mean by processing/outcomes.ts; both pure.
 */
export class MessageProcessor {
  private readonly intake: MessageIntake
  private readonly attempts: DeliveryAttempts
  private readonly queues: QueueGate
  private readonly newer: NewerFormatHandback

  constructor (private readonly d: ProcessorDeps) {
    this.intake = new MessageIntake(d)
    this.queues = new QueueGate(d.cp.queues, d.queueIndex, d.log)
    this.newer = new NewerFormatHandback({
      delayMs: Math.max(1000, (d.config.delivery.retryScheduleS[0] ?? 60) * 1000),
      log: d.log,
      counter: d.metrics.outboundNewerFormat
    })
    this.attempts = new DeliveryAttempts({
      retryScheduleS: d.config.delivery.retryScheduleS,
      poolConnections: d.config.smtp.poolConnections,
      egress: d.config.smtp.egressShaping && d.config.smtp.relay === undefined,
      publicUrl: d.config.http.publicUrl,
      cp: d.cp,
      actors: d.actors,
      log: d.log,
      metrics: d.metrics
    })
  }

  /**
   * For the work-queue sweep (work_queue_sweep.ts): whether a stored message is done: canceled (the cancel ends it)
   * or every recipient has its final outcome, whose events not yet marked published are then published again, as a
   * redelivery would before its acknowledgement (their ids make JetStream drop copies it has), and it may go.
   */
  async settleIfFinal (data: Uint8Array): Promise<boolean> {
    const msg = decodeQueued(data)
    if (typeof msg === 'string') return false
    if (msg.scheduled_at !== undefined && await this.d.schedule.isCanceled(msg.id)) return true
    const recipients = recipientsOf(msg)
    const states = await this.d.state.load(msg.id)
    if (!recipients.every((r) => states.get(r)?.final !== undefined)) return false
    const unpublished = recipients.filter((r) => states.get(r)?.published !== true)
    await this.publish(unpublished.flatMap((r) => states.get(r)!.final!))
    await this.d.state.markPublished(msg.id, unpublished)
    return true
  }

  /**
   * Ends a readable message that can never be sent (its stored content is gone or does not match): every
   * recipient without a final outcome gets `failed` with `category` and `reason` (a reply a crashed run received
   * is recorded instead), then the message is acknowledged. A canceled message, or a copy another one carries on,
   * ends as it would have anyway. A scheduled message not yet due ends now: waiting could not make it sendable.
   */
  async endUnsendable (msg: QueuedMessage, seq: number, category: FailureCategory, reason: string): Promise<Fate> {
    const step = await this.intake.takeUp(msg, seq)
    if (!step.go && step.waiting !== true) return step.fate
    const plan = await this.planOf(msg, Date.now(), true)
    if (plan === undefined) return nak(STATE_RETRY_MS)
    await this.publishRecorded(msg.id, plan)
    if (plan.pending.length === 0) return { kind: 'ack' }
    const results = unsendableResults(plan, { category, reason }, new Date().toISOString())
    return await this.record(msg, new EventFactory(msg, renderedContent(msg).subject), results, plan, new Map(), undefined, seq)
  }

  /**
   * `deliveryCount` is 1 only when the message cannot have been handed out before (the dispatcher judges by JetStream's count
   * and engine/connection_epoch.ts): then there is no state to read. `seq` is
   * the stream sequence of this copy of the message (a rescheduled message may have several; one is sent). `wake`: what
   * an operator's wake-up of this copy asks (queue_holds.ts).
   */
  async process (shard: number, data: Uint8Array, deliveryCount = 2, seq = 0, wake?: string): Promise<Fate> {
    const read = readQueued(data)
    if (read.kind !== 'readable') return await this.unreadable(read, seq)
    const msg = read.msg
    // The content view (content_recorder.ts) is recorded beside the delivery, never ahead of it: a slow JetStream
    // (a restart, say) must not hold the SMTP send past the consumer's ack_wait, where a second copy of the message
    // would be sent. It is awaited before the message's fate is given, so a message is acknowledged only once its
    // content is recorded or the recording failed and was logged (record never throws).
    const content = this.d.content?.record(msg, deliveryCount)
    try {
      return await this.processReadable(shard, msg, deliveryCount, seq, wake)
    } finally {
      await content
    }
  }

  /**
   * A stream message this engine does not deliver. One of a newer format waits for a newer engine
   * (processing/newer_format.ts). A broken one of a format it reads ends `failed` (`unbuildable`, the first problem
   * as the reason) for every recipient it names, never silently. One that names no message, organisation or
   * recipient has nobody to tell: it is never ended, but handed back for an hour, counted and logged each time.
   */
  private async unreadable (read: Exclude<QueuedIntake, { kind: 'readable' }>, seq: number): Promise<Fate> {
    if (read.kind === 'newer') return this.newer.handBack(read.format, seq)
    if (read.salvaged !== undefined) {
      this.d.log.warn({ seq, message_id: read.salvaged.id, problem: read.problem }, 'queued message malformed; it ends failed')
      return await this.endUnsendable(read.salvaged, seq, 'unbuildable', `the queued message is malformed: ${read.problem}`)
    }
    this.d.metrics.outboundUnreadable.inc()
    this.d.log.error({ seq, problem: read.problem }, 'outbound message this engine cannot read; handed back for an hour')
    return { kind: 'nak', delayMs: MAX_NAK_MS }
  }

  private async processReadable (shard: number, msg: QueuedMessage, deliveryCount: number, seq: number, wake?: string): Promise<Fate> {
    const step = await this.intake.takeUp(msg, seq)
    if (!step.go) return step.fate
    const now = Date.now()
    const loaded = await this.planOf(msg, now, deliveryCount > 1)
    if (loaded === undefined) return nak(STATE_RETRY_MS)
    const woke = wakeOf(wake)
    const plan = this.queues.woken(msg, loaded, recipientsOf(msg), woke, now)
    await this.publishRecorded(msg.id, plan)
    const next = messageStep(plan)
    if (next.kind === 'done') return { kind: 'ack' }
    if (next.kind === 'wait') return nak(this.queues.nextLook(woke, plan !== loaded, deliveryCount, next.until, now) - now)
    // the operator's holds and bounces (queue_holds.ts): the recipients they take out get their results here
    const gated = this.queues.check(msg, plan, now)

    // the shard moved while this message waited in hand: its new owner decides every outcome (the thread checks again)
    if (this.d.fences?.open(shard) === false) return nak(MOVED_RETRY_MS)
    // rendered once for the whole delivery: the events' subject, the sandbox's click, the thread's MIME
    const content = renderedContent(msg)
    const events = new EventFactory(msg, content.subject)
    const route = attemptRoute(msg, this.d.cp.domain(msg.org_id, msg.domain_id), gated.plan)
    let results: RecipientResult[] = gated.results
    let followUps = new Map<string, SandboxResult['followUp']>()
    switch (route.kind) {
      case 'fail':
        results = failedResults(plan.unanswered, route.failure, new Date().toISOString())
        break
      case 'none': // only recovered replies to record
        break
      case 'sandbox': {
        const simulated = this.attempts.sandbox(gated.plan.due, content.html)
        results = [...results, ...simulated.results]
        followUps = simulated.followUps
        break
      }
      case 'smtp': {
        const giveUp = giveUpAt(msg, this.d.config.delivery.retryScheduleS, step.dueAt)
        results = [...results, ...await this.attempts.smtp({
          shard,
          message: withContent(msg, content),
          domain: route.domain,
          due: gated.plan.due,
          overdue: spanPassed(Date.now(), giveUp),
          tried: (r) => plan.state(r).attempts > 0
        })]
        break
      }
    }
    return await this.record(msg, events, [...plan.recovered, ...results], plan, followUps, step.dueAt, seq)
  }

  /**
   * The recipients' plan from their recorded delivery state; undefined when the state cannot be read (logged), and
   * the message is handed back: nothing was sent. `load` false: the first delivery of a stream message, which has
   * no state to read.
   */
  private async planOf (msg: QueuedMessage, now: number, load: boolean): Promise<RecipientPlan | undefined> {
    let states = new Map<string, RecipientState>()
    try {
      if (load) states = await this.d.state.load(msg.id)
    } catch (err) {
      this.d.log.warn({ err, message_id: msg.id }, 'delivery state unavailable; message handed back')
      return undefined
    }
    return planRecipients(recipientsOf(msg), states, now)
  }

  /**
   * Writes what the outcomes mean (processing/outcomes.ts): the delivery state first, then the suppressions and
   * the events; the message is acknowledged once no pending recipient is left, else handed back until the
   * earliest one is due.
   */
  private async record (msg: QueuedMessage, events: EventFactory, results: RecipientResult[], plan: RecipientPlan,
    followUps: Map<string, SandboxResult['followUp']>, dueAt: number | undefined, seq: number): Promise<Fate> {
    const schedule = retryScheduleOf(msg, this.d.config.delivery.retryScheduleS)
    const effects = classifyOutcomes(results, {
      events,
      attemptsBefore: (r) => plan.state(r).attempts,
      followUps,
      schedule,
      giveUpAt: giveUpAt(msg, schedule, dueAt),
      now: Date.now()
    })
    this.count(msg, effects.counts)
    this.queues.noteProviders(results, plan, effects.changes)
    try {
      await this.d.state.save(msg.id, effects.changes)
    } catch (err) {
      // the outcomes happened; publish them anyway. Only a redelivery of this message could now repeat a send.
      this.d.log.error({ err, message_id: msg.id }, 'delivery state not saved')
    }
    await this.suppress(msg, effects.suppress)
    await this.publish(effects.events)
    await this.queues.indexed(msg, seq, plan, results, effects.waits, effects.finals)
    const resume = resumeAt(plan.pending, effects, (r) => plan.state(r).notBefore)
    // once acknowledged the message is not delivered again, so only a message that comes back needs the mark
    if (resume === undefined) return { kind: 'ack' }
    await this.d.state.markPublished(msg.id, effects.finals).catch(() => {})
    return nak(resume - Date.now())
  }

  private count (msg: QueuedMessage, counts: readonly OutcomeCount[]): void {
    // a message queued before environments existed is live
    const environment = msg.environment === 'test' ? 'test' : 'live'
    for (const c of counts) {
      this.d.metrics.deliveryOutcomes[environment][c.outcome].inc()
      if (c.outcome === 'bounced') this.d.metrics.bounces[environment][c.bounce][c.category].inc()
      if (c.outcome === 'delivered' && c.complaint) this.d.metrics.complaints[environment].inc()
    }
  }

  /**
   * Hard bounces of the mailbox and domain categories put the address on the organisation's suppression list; an
   * address already on it keeps its first entry. Sandbox outcomes never do: the sandbox simulates events, not list
   * state, so a simulated bounce or complaint cannot block live mail.
   */
  private async suppress (msg: QueuedMessage, entries: OutcomeEffects['suppress']): Promise<void> {
    if (msg.environment === 'test') return
    await Promise.all(entries.map(async ({ email, reason }) => {
      await suppressAddress(this.d.cp, msg.org_id, email, reason, msg.id)
        .then((added) => { if (added) this.d.metrics.suppressionsAdded[reason].inc() })
        .catch((err: unknown) => this.d.log.error({ err, email }, 'suppression not stored'))
    }))
  }

  /** Final events recorded by an earlier delivery that crashed before publishing them. */
  private async publishRecorded (id: string, plan: RecipientPlan): Promise<void> {
    if (plan.republish.length === 0) return
    await this.publish(plan.republish.flatMap((r) => plan.state(r).final!))
    await this.d.state.markPublished(id, plan.republish)
  }

  /** Publishes the events at once and waits for every PubAck. */
  private async publish (events: readonly EventRecord[]): Promise<void> {
    await Promise.all(events.map(async (e) => await publishEvent(this.d.js, e)))
  }
}
