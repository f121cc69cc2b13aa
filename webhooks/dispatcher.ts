import type { JsMsg } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import { HDR_SIGNATURE, HDR_WEBHOOK_ID, HDR_WEBHOOK_SIGNATURE, HDR_WEBHOOK_TIMESTAMP, type WebhookRecord } from '../protocol/mod.ts'
import { JsPublisher } from '../stores/clients/mod.ts'
import { isJobRef, publishWebhookJobBatch, requeuedJobMsgId, webhookJobJson, webhookJobsOf, type DeliveryLog, type StoredWebhookJob, type WebhookJob } from '../stores/webhooks/mod.ts'
import { type ControlPlane } from '../stores/control_plane/mod.ts'
import { activeSecrets, signatureHeader, signingKey, standardSignatureHeader, standardSigningKey } from './sign.ts'
import { AttemptOutcomes } from './outcome.ts'
import { EndpointQueue } from './endpoint_queue.ts'
import { ackSoon } from './ack_batch.ts'
import { JobParker } from './job_parker.ts'
import { AnsweredCheck } from './answered_check.ts'
import { EventReader } from './event_reader.ts'
import { batchSettles, type Settle } from './settle.ts'
import type { WebhookHttpClient } from './http_client.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'

/** Jobs waiting per endpoint beyond those in flight; more are handed back to the stream until it catches up. */
const MAX_WAITING_PER_ENDPOINT = 1000
/** Jobs waiting at endpoints that keep pace; above it (or a second of their work) the engine stops taking work. */
const MAX_MOVING_BACKLOG = 128
/** The backlog is summed again after this many accepted jobs or this long, whichever comes first. */
const BACKLOG_CHECK_JOBS = 32
const BACKLOG_CHECK_MS = 5
/** Parsed webhook URLs kept; past this many the cache starts over. */
const MAX_URLS = 10_000
/** A job redelivered up to this much before it is due is attempted now rather than delayed again. */
const EARLY_SLACK_MS = 50
/** An attempt that threw (not a receiver's answer) is made again after this long. */
const ATTEMPT_FAULT_RETRY_MS = 5000
/** A parked job whose event could not be read is stored again, due after this long. */
const EVENT_READ_RETRY_MS = 5000
/** A job owed to a paused webhook is looked at again this often (plus up to half of it, spread): its delay once active. */
export const PAUSED_RECHECK_MS = 20_000

/**
 * Whether a job may still be attempted: the webhook exists and is active (test events and replays: exists), and the event
 * was not fanned out before the webhook last turned failed. Deleted or failed: the job is dropped; paused: see `held`.
 */
export function deliverable (job: Pick<WebhookJob, 'test' | 'replay' | 'created_at'>, webhook: WebhookRecord | undefined): webhook is WebhookRecord {
  if (webhook === undefined) return false
  if (job.test === true || job.replay === true) return true
  if (webhook.status !== 'active') return false
  return webhook.failed_at === undefined || job.created_at > Date.parse(webhook.failed_at)
}

/**
 * Whether a job waits for its webhook to be active again: the webhook is paused and still owes the job (an event
 * fanned out while it was active, not before it last turned failed). Events that occur while it is paused make no
 * job (the fan-out skips it), so what waits is only what it owed when it was paused: its retries resume on the
 * schedule once it is active, each attempt counted as before.
 */
export function held (job: Pick<WebhookJob, 'test' | 'replay' | 'created_at'>, webhook: WebhookRecord | undefined): boolean {
  if (webhook?.status !== 'paused' || job.test === true || job.replay === true) return false
  return webhook.failed_at === undefined || job.created_at > Date.parse(webhook.failed_at)
}

const pausedWaitMs = (): number => Math.round(PAUSED_RECHECK_MS * (1 + Math.random() * 0.5))

/**
 * The signature headers of one request: X-Service-Signature and the Standard Webhooks trio, each with one
 * signature per active secret (two during a rotation's grace period). `webhook-id` is the event id, so it is
 * the same on every retry and replay of the event.
 */
export function signedHeaders (webhook: WebhookRecord, eventId: string, body: Buffer, nowMs: number): string[] {
  const t = Math.floor(nowMs / 1000)
  const secrets = activeSecrets(webhook, nowMs)
  return [
    HDR_SIGNATURE, signatureHeader(secrets.map(signingKey), body, t),
    HDR_WEBHOOK_ID, eventId,
    HDR_WEBHOOK_TIMESTAMP, String(t),
    HDR_WEBHOOK_SIGNATURE, standardSignatureHeader(secrets.map(standardSigningKey), eventId, t, body)
  ]
}

/**
 * `body`: the event envelope as JSON bytes when the fan-out already serialised it (once for all its webhooks);
 * the same bytes are signed and sent, so they are encoded once.
 */
interface Work {
  m: Settle
  job: WebhookJob
  webhook: WebhookRecord
  url: URL
  body?: Buffer
  /** From a message JetStream handed out again: asked about (AnsweredCheck) when its slot comes, before posting. */
  recheck?: boolean
}

/**
 * Makes delivery attempts: picks the endpoint queue, signs the exact body sent, POSTs, records the attempt,
 * then schedules the next attempt or marks the webhook failed. One per process, shared by the shard consumers.
 *
 * An endpoint is an organisation's endpoint origin: each organisation has its own queue and slots for an origin
 * (and its own connections, see WebhookHttpClient), so a receiver that one organisation points at a host shared
 * with others (an integration hub) spends only that organisation's slots when it is slow.
 */
export class WebhookDispatcher {
  /** organisation id → endpoint origin → its queue. */
  private readonly endpoints = new Map<string, Map<string, EndpointQueue<Work>>>()
  /** webhook id → its endpoint's queue, for handing back a stalled endpoint's jobs without reading them. */
  private readonly queueOf = new Map<string, EndpointQueue<Work>>()
  private readonly outcomes: AttemptOutcomes
  private readonly parker: JobParker
  /** Parked batches and retries go to the job stream through one reply subscription (see JsPublisher). */
  private readonly jobs: JsPublisher
  private readonly events: EventReader
  private readonly answeredCheck: AnsweredCheck
  private readonly urls = new Map<string, { url: URL, origin: string } | null>()
  private draining = false

  constructor (
    private readonly config: Config,
    nc: NatsConnection,
    private readonly cp: ControlPlane,
    deliveryLog: DeliveryLog,
    private readonly http: WebhookHttpClient,
    private readonly logger: Logger,
    private readonly metrics: OutboxMetrics
  ) {
    this.jobs = new JsPublisher(nc)
    this.answeredCheck = new AnsweredCheck(deliveryLog)
    this.outcomes = new AttemptOutcomes(config.webhook.retryScheduleS, deliveryLog, cp, async (job) => await this.storeOne(job), logger, metrics)
    this.parker = new JobParker(this.jobs, config.engine.shards)
    this.events = new EventReader(nc)
  }

  /**
   * Takes one job message (one job or a batch of one webhook's jobs) from a shard consumer; returns at once,
   * the attempts run in the endpoint's queue. When the endpoint cannot take them now, the message is handed
   * back to the stream with a delay estimated from the endpoint's pace (not an attempt: nothing changes).
   */
  accept (m: JsMsg): void {
    if (this.draining) { m.nak(); return }
    // Work for an endpoint known to be stalled goes back unread (the webhook id is the subject's last token).
    const known = this.queueOf.get(m.subject.slice(m.subject.lastIndexOf('.') + 1))
    if (known !== undefined && known.freeSlots === 0 && !known.keepsPace(Date.now())) { m.nak(this.laterMs(known, Date.now())); return }
    let all: StoredWebhookJob[]
    try {
      all = webhookJobsOf(m.json())
    } catch {
      // no engine wrote it, and no one can be told; a plain term(): nats-server 2.9 ignores one with a reason
      this.logger.error({ seq: m.seq, subject: m.subject }, 'not a webhook job; dropped')
      m.term()
      return
    }
    const first = all[0]!
    const webhook = this.cp.webhooks.get(`${first.org_id}.${first.webhook_id}`)
    if (all.some((j) => held(j, webhook))) { m.nak(pausedWaitMs()); return }
    const jobs = all.filter((j) => j.webhook_id === first.webhook_id && deliverable(j, webhook))
    if (jobs.length === 0 || webhook === undefined) { ackSoon(m); return }
    const now = Date.now()
    const wait = Math.min(...jobs.map((j) => j.due_at)) - now
    if (wait > EARLY_SLACK_MS) { m.nak(wait); return }
    const settles: Settle[] = all.length === 1 ? [m] : batchSettles(m, jobs, async (job, delayMs) => await this.requeue(job, delayMs))
    const target = this.urlOf(webhook.url)
    if (target === undefined) {
      const failed = { statusCode: 0, durationMs: 0, error: 'invalid_url' }
      jobs.forEach((job, i) => { void this.withEvent(job, settles[i]!).then((full) => { if (full !== undefined) void this.outcomes.settle(settles[i]!, full, webhook, failed, new Date()) }) })
      return
    }
    const { url, origin } = target
    const q = this.endpoint(webhook.org_id, origin)
    this.queueOf.set(webhook.id, q)
    // An endpoint that does not keep pace takes a batch only as far as it has free slots; the rest is
    // parked again (one message) until it is likely to have room.
    const take = q.keepsPace(now) ? jobs.length : Math.min(jobs.length, q.freeSlots)
    if (take === 0 || !q.canTake(take, now)) { m.nak(this.laterMs(q, now)); return }
    const redelivered = m.redelivered
    jobs.forEach((job, i) => {
      const settle = settles[i]!
      if (i >= take) { settle.nak(this.laterMs(q, now)); return }
      if (!isJobRef(job)) { this.offer(q, { m: settle, job, webhook, url, recheck: redelivered }); return }
      // A parked job names its event: read it now that the attempt is about to be made.
      void this.withEvent(job, settle).then((full) => { if (full !== undefined) this.offer(q, { m: settle, job: full, webhook, url, recheck: redelivered }) })
    })
  }

  /**
   * Whether the webhook already answered the event with a 2xx, for work JetStream handed out again (see
   * AnsweredCheck); such a repeat is counted and left unsent. Replays and test events are never asked about: they are
   * sent again on purpose.
   */
  async alreadyAnswered (webhookId: string, job: Pick<WebhookJob, 'event' | 'replay' | 'test'>): Promise<boolean> {
    if (job.replay === true || job.test === true) return false
    const answered = await this.answeredCheck.answered(webhookId, job.event)
    if (answered) this.metrics.webhookRepeatsSkipped.inc()
    return answered
  }

  /** Queues an attempt; when the endpoint filled up meanwhile (an event was being read), it waits in the stream. */
  private offer (q: EndpointQueue<Work>, w: Work): void {
    if (!q.offer(w)) w.m.nak(this.laterMs(q, Date.now()))
  }

  /**
   * The job with its event: read from OB_EVENTS for a parked job. When NATS cannot answer, the job is stored
   * again for later; when the event is no longer there (older than OB_EVENTS keeps, or purged), it cannot be
   * sent and is dropped with a warning.
   */
  private async withEvent (job: StoredWebhookJob, settle: Settle): Promise<WebhookJob | undefined> {
    if (!isJobRef(job)) return job
    try {
      const full = await this.events.job(job)
      if (full === undefined) {
        this.logger.warn({ webhook_id: job.webhook_id, event_id: job.event_id, event_seq: job.event_seq }, 'parked webhook event no longer in the event stream; dropped')
        ackSoon(settle)
      }
      return full
    } catch (err) {
      this.logger.warn({ err, webhook_id: job.webhook_id }, 'cannot read a parked webhook event; it will be tried again')
      settle.nak(EVENT_READ_RETRY_MS)
      return undefined
    }
  }

  private laterMs (q: EndpointQueue<Work>, now: number): number {
    return Math.round(q.retryLaterMs(now) * (1 + Math.random() * 0.5))
  }

  /**
   * Stores a job again to be attempted after `delayMs` (the attempt count is unchanged), gathered with other
   * jobs of its webhook into one message.
   */
  private async requeue (job: StoredWebhookJob, delayMs: number): Promise<void> {
    const waiting = { ...job, due_at: Math.max(job.due_at, Date.now() + delayMs) }
    if (this.draining) await this.storeOne(waiting, true)
    else await this.parker.park(waiting, undefined, true)
  }

  /**
   * Stores one job as a message of its own (a retry: its jittered due time is its own, so it is not gathered
   * with others), naming its event when its OB_EVENTS sequence is known. `again`: see JobParker.park.
   */
  private async storeOne (job: StoredWebhookJob, again = false): Promise<void> {
    await publishWebhookJobBatch(this.jobs, this.config.engine.shards, [job], [webhookJobJson(job)], again ? [requeuedJobMsgId(job)] : undefined)
  }

  /** Parks a first attempt in the job stream (batched per webhook); resolves once it is stored. */
  park (job: WebhookJob, eventJson?: string): Promise<void> {
    return this.parker.park(job, eventJson)
  }

  /**
   * The webhook's URL parsed once (not per event), and the same object every time, so that the HTTP client
   * can keep what it derives from it; undefined when it does not parse.
   */
  private urlOf (href: string): { url: URL, origin: string } | undefined {
    let parsed = this.urls.get(href)
    if (parsed === undefined) {
      if (this.urls.size >= MAX_URLS) this.urls.clear()
      try {
        const url = new URL(href)
        parsed = { url, origin: url.origin }
      } catch {
        parsed = null
      }
      this.urls.set(href, parsed)
    }
    return parsed ?? undefined
  }

  private endpoint (orgId: string, origin: string): EndpointQueue<Work> {
    let ofOrg = this.endpoints.get(orgId)
    if (ofOrg === undefined) {
      ofOrg = new Map()
      this.endpoints.set(orgId, ofOrg)
    }
    let q = ofOrg.get(origin)
    if (q === undefined) {
      q = new EndpointQueue<Work>(this.config.webhook.endpointConcurrency, MAX_WAITING_PER_ENDPOINT, async (w) => await this.attempt(w), (err, w) => { this.attemptFailed(err, w) })
      ofOrg.set(origin, q)
    }
    return q
  }

  /** Every endpoint queue, of every organisation. */
  private * queues (): IterableIterator<EndpointQueue<Work>> {
    for (const ofOrg of this.endpoints.values()) yield * ofOrg.values()
  }

  /**
   * The fast path for attempt 1: when the endpoint keeps pace and has room (or has a free slot), the fan-out
   * makes the attempt itself instead of writing a job and reading it back. Resolves once the attempt is made
   * and its retry (if any) is stored as a job; rejects when that could not be stored, and the caller then
   * hands the event back. Returns undefined when the endpoint cannot take it: the caller parks the job.
   */
  offerDirect (job: WebhookJob, webhook: WebhookRecord, event: Pick<JsMsg, 'working'>, body?: Buffer): Promise<void> | undefined {
    if (this.draining) return undefined
    const target = this.urlOf(webhook.url)
    if (target === undefined) return undefined
    const { url, origin } = target
    const q = this.endpoint(webhook.org_id, origin)
    this.queueOf.set(webhook.id, q)
    if (!q.canTake(1, Date.now())) return undefined
    return new Promise<void>((resolve, reject) => {
      const m: Settle = {
        ack: resolve,
        // A direct attempt that must wait becomes a job due after the delay, like any other.
        nak: (delayMs = 0) => { this.requeue(job, delayMs).then(resolve, reject) },
        working: () => event.working()
      }
      q.offer({ m, job, webhook, url, body })
    })
  }

  private backlogCheckedAt = 0
  private acceptedSinceCheck = 0
  private full = false

  /**
   * Backpressure for the fan-out and the shard consumers: true while the endpoints that keep pace already
   * hold about a second of their work. Dead or slow receivers do not count, so they cannot stop the pull for
   * healthy ones; their overflow waits in the job stream instead.
   */
  saturated (): boolean {
    const now = Date.now()
    if (++this.acceptedSinceCheck < BACKLOG_CHECK_JOBS && now - this.backlogCheckedAt < BACKLOG_CHECK_MS) return this.full
    this.backlogCheckedAt = now
    this.acceptedSinceCheck = 0
    // Endpoints that have answered pace the fan-out. One that never answered yet (new, or dead from the start)
    // does not, unless no endpoint has answered yet: else a receiver that hangs from its first request would
    // hold every other endpoint back until it is found stalled.
    const answered = { backlog: 0, capacity: 0 }
    const unanswered = { backlog: 0, capacity: 0 }
    for (const q of this.queues()) {
      // Work that waits here for an endpoint that stopped keeping pace goes back to the job stream.
      if (q.waiting.length > 0 && !q.keepsPace(now)) for (const w of q.takeWaiting()) w.m.nak(this.laterMs(q, now))
      const p = q.pacing(now)
      const sum = q.answered ? answered : unanswered
      sum.backlog += p.waiting
      sum.capacity += p.capacity
    }
    const { backlog, capacity } = answered.capacity > 0 ? answered : unanswered
    // Full when the endpoints that keep pace hold about a second of their work (or the absolute limit).
    this.full = capacity > 0 && backlog >= Math.min(MAX_MOVING_BACKLOG, capacity)
    return this.full
  }

  private async attempt (w: Work): Promise<void> {
    // The record may have changed while the job waited for a slot.
    const current = this.cp.webhooks.get(`${w.job.org_id}.${w.job.webhook_id}`)
    if (held(w.job, current)) { w.m.nak(pausedWaitMs()); return }
    if (!deliverable(w.job, current)) { ackSoon(w.m); return }
    // Asked here, in the endpoint's slot, so work handed out again waits and counts in the queue like any other.
    if (w.recheck === true && await this.alreadyAnswered(current.id, w.job)) { ackSoon(w.m); return }
    const at = new Date()
    const body = w.body ?? Buffer.from(JSON.stringify(w.job.event))
    const result = await this.http.post(current.org_id, w.url, body, signedHeaders(current, w.job.event.id, body, at.getTime()))
    await this.outcomes.settle(w.m, w.job, current, result, at)
  }

  /**
   * An attempt that threw instead of settling (a fault in Outbox or a damaged webhook record, not an answer
   * of the receiver): logged without the record (it holds the secret), and its job comes back after a delay.
   */
  private attemptFailed (err: unknown, w: Work): void {
    this.logger.error({ err, webhook_id: w.job.webhook_id, event_id: w.job.event.id, attempt: w.job.attempt }, 'webhook attempt failed unexpectedly; it will be made again')
    w.m.nak(ATTEMPT_FAULT_RETRY_MS)
  }

  /** Re-sends a working() for every waiting job so none is redelivered while it waits for its endpoint. */
  keepAlive (): void {
    for (const q of this.queues()) for (const w of q.waiting) w.m.working()
    for (const [orgId, ofOrg] of this.endpoints) {
      for (const [origin, q] of ofOrg) if (q.idle) ofOrg.delete(origin)
      if (ofOrg.size === 0) this.endpoints.delete(orgId)
    }
    // the same test as above, in the same turn: exactly the queues just removed
    for (const [id, q] of this.queueOf) if (q.idle) this.queueOf.delete(id)
  }

  /** Hands waiting jobs back to the stream and waits for attempts in flight, up to the deadline. */
  async drain (deadline: number): Promise<void> {
    this.draining = true
    for (const q of this.queues()) for (const w of q.takeWaiting()) w.m.nak()
    await this.parker.flushAll().catch(() => {})
    while ([...this.queues()].some((q) => q.active > 0) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  }

  /** After the drain: job writes still waiting for their acknowledgement fail (their messages come back). */
  close (): void {
    this.jobs.close()
  }
}
