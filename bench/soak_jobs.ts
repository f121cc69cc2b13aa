import { jetstreamManager, type ConsumerInfo, type JetStreamManager, type StoredMsg } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { STREAM_WEBHOOK_JOBS, type WebhookRecord } from '../protocol/mod.ts'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { storedEventId, webhookJobsOf, type StoredWebhookJob } from '../stores/webhooks/mod.ts'

/**
 * What keeps the webhook job stream from being idle after the drain: each job consumer that still owes work, in
 * the server's own numbers, and the first job messages it holds, decoded, so a failure says which jobs wait, for
 * which webhook, and until when.
 */

/** A job consumer with pending or un-acknowledged work, as the server reports it. */
export interface StuckJobConsumer {
  name: string
  /** Its filter subject (one shard: `ob.whjob.<shard>.>`). */
  filter: string
  num_pending: number
  num_ack_pending: number
  num_redelivered: number
  ack_floor: { consumer_seq: number, stream_seq: number }
  delivered: { consumer_seq: number, stream_seq: number }
  /** Messages the stream stores on the consumer's subjects. */
  stored: number
  /**
   * Un-acknowledged entries with no stored message behind them, at least: `num_ack_pending` minus the stored messages
   * it has delivered (stored minus `num_pending`; acknowledged messages still stored make it count too few). Above 0,
   * the consumer counts entries for messages the stream has removed; nothing is ever delivered for them (what a killed
   * nats-server 2.9 leaves, see stores/clients/ghost_entries.ts).
   */
  without_message: number
  /** The first stored job messages from the ack floor up (at most STUCK_MESSAGES over all consumers). */
  messages: StuckJobMessage[]
}

/** One stored job message, decoded. Times are seconds relative to when it was read (due_in_s < 0: overdue). */
export interface StuckJobMessage {
  seq: number
  /** `delivered`: handed out at least once (un-acknowledged, or acknowledged and not removed); `waiting`: never yet. */
  state: 'delivered' | 'waiting'
  webhook_id: string
  /** The webhook's record now: its status, or `deleted`. */
  webhook: WebhookRecord['status'] | 'deleted'
  /** `single`, or a batch (`jobs`: full jobs, `refs`: jobs naming their events) of `jobs` jobs. */
  kind: 'single' | 'batch of jobs' | 'batch of refs'
  jobs: number
  /** Of the first job (for a batch: of the job due first). */
  attempt: number
  due_in_s: number
  age_s: number
  event_id: string
  event_type?: string
  test?: boolean
  replay?: boolean
  /** Not a job at all: what its bytes begin with. */
  unreadable?: string
}

const STUCK_MESSAGES = 10
/** Most look-ups per consumer while looking for its stored messages. */
const MAX_LOOKUPS = 200

/** The job consumers that owe work, with their first stuck messages decoded; empty when none does. */
export async function stuckWebhookJobs (natsUrl: string): Promise<StuckJobConsumer[]> {
  const nc = await connect({ servers: natsUrl })
  let cp: ControlPlane | undefined
  try {
    const jsm = await jetstreamManager(nc)
    const owing: ConsumerInfo[] = []
    for await (const c of jsm.consumers.list(STREAM_WEBHOOK_JOBS)) if (c.num_pending + c.num_ack_pending > 0) owing.push(c)
    if (owing.length === 0) return []
    cp = await ControlPlane.open(nc, { replicas: 1 })
    const webhookOf = (job: StoredWebhookJob): StuckJobMessage['webhook'] =>
      cp!.webhooks.get(`${job.org_id}.${job.webhook_id}`)?.status ?? 'deleted'
    const out: StuckJobConsumer[] = []
    let budget = STUCK_MESSAGES
    for (const c of owing) {
      const filter = c.config.filter_subject ?? '>'
      const stored = await storedOn(jsm, filter)
      const messages: StuckJobMessage[] = []
      let m = await storedFrom(jsm, filter, c.ack_floor.stream_seq + 1)
      for (let looked = 0; m !== null && messages.length < budget && looked < MAX_LOOKUPS; looked++) {
        messages.push(decode(m, c, webhookOf))
        m = await storedFrom(jsm, filter, m.seq + 1)
      }
      budget -= messages.length
      out.push({
        name: c.name,
        filter,
        num_pending: c.num_pending,
        num_ack_pending: c.num_ack_pending,
        num_redelivered: c.num_redelivered,
        ack_floor: { consumer_seq: c.ack_floor.consumer_seq, stream_seq: c.ack_floor.stream_seq },
        delivered: { consumer_seq: c.delivered.consumer_seq, stream_seq: c.delivered.stream_seq },
        stored,
        without_message: c.num_ack_pending - (stored - c.num_pending),
        messages
      })
    }
    return out
  } finally {
    cp?.close()
    await nc.close()
  }
}

function decode (m: StoredMsg, c: ConsumerInfo, webhookOf: (job: StoredWebhookJob) => StuckJobMessage['webhook']): StuckJobMessage {
  const now = Date.now()
  const state = m.seq <= c.delivered.stream_seq ? 'delivered' : 'waiting'
  let data: unknown
  let jobs: StoredWebhookJob[]
  try {
    data = m.json()
    jobs = webhookJobsOf(data)
  } catch {
    const head = new TextDecoder().decode(m.data.subarray(0, 80))
    const webhookId = m.subject.slice(m.subject.lastIndexOf('.') + 1)
    return {
      seq: m.seq, state, webhook_id: webhookId, webhook: 'deleted', kind: 'single', jobs: 0, attempt: 0, due_in_s: 0, age_s: 0,
      event_id: '', unreadable: head
    }
  }
  const d = data as { jobs?: unknown, refs?: unknown }
  const kind = Array.isArray(d.jobs) ? 'batch of jobs' : Array.isArray(d.refs) ? 'batch of refs' : 'single'
  const first = jobs.reduce((a, b) => (b.due_at < a.due_at ? b : a))
  const event = 'event' in first ? first.event : undefined
  return {
    seq: m.seq,
    state,
    webhook_id: first.webhook_id,
    webhook: webhookOf(first),
    kind,
    jobs: jobs.length,
    attempt: first.attempt,
    due_in_s: Math.round((first.due_at - now) / 100) / 10,
    age_s: Math.round((now - first.created_at) / 100) / 10,
    event_id: storedEventId(first),
    ...(event !== undefined ? { event_type: event.type } : {}),
    ...(first.test === true ? { test: true } : {}),
    ...(first.replay === true ? { replay: true } : {})
  }
}

/** Messages stored on the subjects `filter` matches. */
async function storedOn (jsm: JetStreamManager, filter: string): Promise<number> {
  const info = await jsm.streams.info(STREAM_WEBHOOK_JOBS, { subjects_filter: filter })
  return Object.values(info.state.subjects ?? {}).reduce((n, k) => n + k, 0)
}

/** The first message at or after `seq` on a subject `filter` matches, or null. */
async function storedFrom (jsm: JetStreamManager, filter: string, seq: number): Promise<StoredMsg | null> {
  // `next_by_subj` (wildcards allowed) is answered by nats-server 2.9 and later; the client's type lists it only for direct gets
  const query = { seq, next_by_subj: filter } as unknown as { seq: number }
  return await jsm.streams.getMessage(STREAM_WEBHOOK_JOBS, query)
}

/** One line per consumer for a failure message: its numbers, then its messages. */
export function describeStuckJobs (stuck: readonly StuckJobConsumer[]): string {
  return stuck.map((c) => {
    const head = `${c.name}: pending ${c.num_pending}, ack pending ${c.num_ack_pending} (of them without a stored message ` +
      `at least ${c.without_message}), redelivered ${c.num_redelivered}, ack floor ${c.ack_floor.stream_seq}, ` +
      `delivered ${c.delivered.stream_seq}, stored ${c.stored}`
    const msgs = c.messages.map((m) => m.unreadable !== undefined
      ? `#${m.seq} unreadable ${JSON.stringify(m.unreadable)}`
      : `#${m.seq} ${m.state} ${m.webhook_id} (${m.webhook}) ${m.kind}${m.jobs > 1 ? ` of ${m.jobs}` : ''} attempt ${m.attempt} ` +
        `due in ${m.due_in_s} s, ${m.event_type ?? 'event'} ${m.event_id}` +
        `${m.test === true ? ' test' : ''}${m.replay === true ? ' replay' : ''}`)
    return msgs.length === 0 ? head : `${head}: ${msgs.join('; ')}`
  }).join(' | ')
}
