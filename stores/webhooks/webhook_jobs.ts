import { jetstream } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { webhookJobSubject, shardOf, newId, webhookJobStream, type WebhookRecord } from '../../protocol/mod.ts'
import { ensureJetStream, type JsPublish } from '../clients/mod.ts'

/**
 * What a webhook receives: exactly the event envelope (protocol/events.ts, webhookEnvelopeOf). `environment` is absent
 * only from jobs stored by a version before it, which are sent as stored.
 */
export interface WebhookEnvelope {
  id: string
  type: string
  timestamp: string
  environment?: 'live' | 'test'
  data: Record<string, unknown>
}

/**
 * One delivery attempt waiting to be made. Each retry is a new job with `attempt + 1` and its `due_at`, so
 * the attempt count survives restarts and redeliveries exactly; the event (and its id) is carried unchanged.
 */
export interface WebhookJob {
  event: WebhookEnvelope
  /**
   * The event's sequence in OB_EVENTS when it came from there (not for test events). Parked work is stored
   * with this instead of the event (see WebhookJobRef).
   */
  event_seq?: number
  org_id: string
  webhook_id: string
  /** 1 for the immediate attempt, 2..N+1 for the retries. */
  attempt: number
  /** Unix ms before which the attempt is not made. */
  due_at: number
  /** Unix ms at which the event was fanned out to this webhook; kept by every retry. */
  created_at: number
  /** A test event from POST /v1/webhooks/{id}/test: one attempt, whatever the webhook's status. */
  test?: boolean
  /** A replay from POST /v1/webhooks/{id}/replay: one attempt, whatever the webhook's status. */
  replay?: boolean
  /**
   * Set on the jobs of a replay or a recover: keeps their attempts apart from the event's first delivery
   * (and from other replays) in the job stream's duplicate window.
   */
  run?: string
}

/**
 * A job stored with its event named, not carried: `event_seq` in OB_EVENTS (which keeps events 30 days, the
 * job stream 7), and `event_id` to check what is read back. Parked work is stored this way, so an endpoint
 * that cannot keep pace costs the job stream about 200 bytes per event instead of the whole event.
 */
export interface WebhookJobRef extends Omit<WebhookJob, 'event' | 'event_seq'> { event_seq: number, event_id: string }

/** A job as read from the job stream: with its event, or naming it. */
export type StoredWebhookJob = WebhookJob | WebhookJobRef

export function isJobRef (job: StoredWebhookJob): job is WebhookJobRef {
  return (job as Partial<WebhookJob>).event === undefined
}

export function storedEventId (job: StoredWebhookJob): string {
  return isJobRef(job) ? job.event_id : job.event.id
}

export function webhookJobMsgId (job: StoredWebhookJob): string {
  const id = `${storedEventId(job)}:${job.webhook_id}:${job.attempt}`
  return job.run === undefined ? id : `${id}:${job.run}`
}

/** Creates the job stream (without its consumers) or brings it to the table's settings; run lazily by the gateway. */
export async function ensureWebhookJobStream (nc: NatsConnection, replicas: number, storeBytes: number): Promise<void> {
  await ensureJetStream(nc, { streams: [webhookJobStream(replicas, storeBytes)], consumers: [] })
}

const enc = new TextEncoder()

export async function publishWebhookJob (js: JsPublish, shards: number, job: WebhookJob): Promise<void> {
  const subject = webhookJobSubject(shardOf(job.webhook_id, shards), job.webhook_id)
  await js.publish(subject, enc.encode(JSON.stringify(job)), { msgID: webhookJobMsgId(job) })
}

/**
 * A job as stored by the parker: naming its event when its OB_EVENTS sequence is known (a WebhookJobRef),
 * else carrying it, reusing the event's JSON when the caller has it.
 */
export function webhookJobJson (job: StoredWebhookJob, eventJson?: string): string {
  if (isJobRef(job)) return JSON.stringify(job)
  const { event, event_seq: seq, ...rest } = job
  if (seq !== undefined) return refJson(seq, event.id, job)
  const tail = JSON.stringify(rest)
  const e = eventJson ?? JSON.stringify(event)
  return tail === '{}' ? `{"event":${e}}` : `{"event":${e},${tail.slice(1)}`
}

/**
 * A WebhookJobRef's JSON written out field by field: a dead endpoint has one parked per event, and building
 * the ref object to stringify it cost as much as the rest of its parking. Ids are `prefix_` plus Crockford
 * base32 and need no escaping; anything else goes through JSON.stringify.
 */
function refJson (seq: number, eventId: string, job: WebhookJob): string {
  const plainIds = plainId(eventId) && plainId(job.org_id) && plainId(job.webhook_id)
  if (job.test !== undefined || job.replay !== undefined || job.run !== undefined || !plainIds) {
    const { event: _e, event_seq: _s, ...rest } = job
    return JSON.stringify({ event_seq: seq, event_id: eventId, ...rest })
  }
  return `{"event_seq":${seq},"event_id":"${eventId}","org_id":"${job.org_id}","webhook_id":"${job.webhook_id}",` +
    `"attempt":${job.attempt},"due_at":${job.due_at},"created_at":${job.created_at}}`
}

const PLAIN_ID = /^[a-z]+_[0-9a-z]+$/
const plainId = (s: unknown): boolean => typeof s === 'string' && PLAIN_ID.test(s)

/**
 * Queues webhook jobs the gateway makes (test events, replays, recovers) through the same delivery path as real
 * events. One per gateway, made by its main.ts; it holds the connection's JetStream client and ensures the job
 * stream once, on first use (again after a failed try). Nothing to close: it owns no connection.
 */
export class WebhookJobQueue {
  private readonly js: ReturnType<typeof jetstream>
  private ready?: Promise<void>

  constructor (private readonly nc: NatsConnection, private readonly opts: { shards: number, replicas: number, storeBytes: number }) {
    this.js = jetstream(nc)
  }

  /**
   * A test event for one webhook. It goes to that webhook only, whatever its subscriptions and status, is
   * attempted once, and is not stored as an event of the org. Its `environment` is that of the key that asked for it.
   */
  async enqueueTest (webhook: WebhookRecord, type: string, now = Date.now(), environment: 'live' | 'test' = 'live'): Promise<string> {
    await this.streamReady()
    const event: WebhookEnvelope = {
      id: newId('evt', now), type, timestamp: new Date(now).toISOString(), environment, data: sampleEventData(type, now)
    }
    await publishWebhookJob(this.js, this.opts.shards, {
      event, org_id: webhook.org_id, webhook_id: webhook.id, attempt: 1, due_at: now, created_at: now, test: true
    })
    return event.id
  }

  /**
   * Jobs of real events (a replay or a recover) for one webhook, each carrying its event as stored, one stream
   * message per job. Resolves once every one is stored.
   */
  async enqueueJobs (jobs: readonly WebhookJob[], eventJson: readonly string[]): Promise<void> {
    await this.streamReady()
    await Promise.all(jobs.map(async (job, i) => {
      const subject = webhookJobSubject(shardOf(job.webhook_id, this.opts.shards), job.webhook_id)
      await this.js.publish(subject, enc.encode(webhookJobJson(job, eventJson[i])), { msgID: webhookJobMsgId(job) })
    }))
  }

  /** The job stream exists: ensured on first use, again after a failed try. */
  private async streamReady (): Promise<void> {
    if (this.ready === undefined) {
      const ready = ensureWebhookJobStream(this.nc, this.opts.replicas, this.opts.storeBytes)
      ready.catch(() => { if (this.ready === ready) this.ready = undefined })
      this.ready = ready
    }
    await this.ready
  }
}

/** Plausible `data` for a test event of each type, marked `test: true`. */
export function sampleEventData (type: string, now: number): Record<string, unknown> {
  const at = new Date(now).toISOString()
  const base = {
    message_id: 'msg_test0000000000000000000000', to: 'recipient@example.com', metadata: { source: 'webhook_test' }, test: true
  }
  switch (type) {
    case 'delivered': return { ...base, delivered_at: at, smtp_response: '250 2.0.0 OK' }
    case 'bounced':
      return {
        ...base,
        bounce_type: 'hard',
        bounce_code: '550',
        bounce_message: '550 5.1.1 User unknown',
        bounce_category: 'mailbox',
        bounced_at: at
      }
    case 'deferred':
      return {
        ...base,
        deferred_at: at,
        smtp_response: '451 4.7.1 Try again later',
        attempt: 1,
        next_attempt_at: new Date(now + 60_000).toISOString()
      }
    case 'opened': return { ...base, opened_at: at, user_agent: 'Mozilla/5.0', ip_address: '203.0.113.7' }
    case 'clicked': return { ...base, clicked_at: at, url: 'https://example.com/', user_agent: 'Mozilla/5.0', ip_address: '203.0.113.7' }
    case 'unsubscribed': return { ...base, unsubscribed_at: at, method: 'link' }
    case 'complained': return { ...base, complained_at: at, feedback_type: 'abuse' }
    case 'domain.health_changed': return {
      domain_id: 'dom_test0000000000000000000000',
      domain: 'example.com',
      status: 'error',
      previous_status: 'ok',
      checked_at: at,
      worsened: [{
        check: 'dkim',
        subject: 'ob202601._domainkey.example.com',
        status: 'error',
        message: 'The DKIM record is missing: receivers cannot verify mail signed with this key.',
        previous_status: 'ok'
      }],
      test: true
    }
    case 'stream.paused': return {
      stream: 'transactional',
      reason: 'complaint_rate',
      paused_at: at,
      counts: { delivered: 1990, hard_bounced: 10, complained: 7 },
      rates: { volume: 2000, bounce_rate: 0.005, complaint_rate: 0.0035 },
      test: true
    }
    case 'stream.resumed': return { stream: 'transactional', resumed_at: at, resumed_by: 'admin', paused_at: at, test: true }
    default: return {
      message_id: base.message_id,
      route_id: 'rt_test0000000000000000000000',
      from: 'sender@example.org',
      to: ['inbox@example.com'],
      subject: 'Test inbound message',
      text: 'This is a test inbound message.',
      html: '<p>This is a test inbound message.</p>',
      headers: { subject: 'Test inbound message' },
      authentication: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
      spam_score: 0.5,
      attachments: [],
      received_at: at,
      test: true
    }
  }
}
