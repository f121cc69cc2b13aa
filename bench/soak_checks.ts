import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { STREAM_EVENTS, STREAM_OUTBOUND, eventSubject, type EventRecord } from '../protocol/mod.ts'
import { pendingState, sinkCounts, sleep } from '../test/integration/faults/fault_env.ts'
import type { SoakWorld } from './soak.ts'
import type { InboundTallies } from './soak_inbound.ts'
import type { WebhookReplacer, WebhookSpan } from './soak_webhooks.ts'

/** One webhook request as the receiver saw it: the event id and when it arrived (ms since the epoch). */
export interface Received { id: string, at: number }

/**
 * `accepted`: ids answered 202 (a refusal retried with its Idempotency-Key until 202 counts once, when accepted).
 * `statuses`: every answer of the senders by HTTP status; `refusals`: the answers other than 202 by status and
 * error code (`503 queue_full` while the outbound queue is at its share), none of them accepted.
 */
export interface SoakTallies extends InboundTallies { accepted: string[], statuses: Map<number, number>, refusals: Map<string, number> }

/**
 * Webhook figures are per webhook, summed: each webhook is owed the events of its types published while it
 * existed (see soak_webhooks.ts), the one that lives through the run and those replaced during it alike.
 */
export interface SoakChecks {
  lost: number
  duplicated: number
  /** Message-IDs that reached the sink more than once. */
  duplicatedIds: string[]
  /** Repeated SMTP transactions by the last fault injected before the second copy arrived. */
  duplicatesByFault: Record<string, number>
  webhooks: number
  webhookExpected: number
  webhookLost: number
  webhookRepeats: number
  /** Repeats to the webhook that lives through the run (its receiver goes down) and to the replaced ones. */
  repeatsStable: number
  repeatsReplaced: number
  /** Repeats by the last fault injected before the repeat arrived ('none' before the first). */
  repeatsByFault: Record<string, number>
  /** Repeats by how long after the event's first request to the same webhook they came. */
  repeatsByDelay: Record<string, number>
  /** Webhooks that missed an event they were owed, with how many. */
  /** `firstMissing`: up to five ids of the events it lacks, to trace (published, fanned out, job, attempts). */
  webhooksMissing: Array<{ id: string, path: string, owed: number, lost: number, firstMissing: string[] }>
  inboundLost: number
  drainS: number
}

/** The webhook that lives through the whole run (created before the first event) and what it subscribes to. */
const STABLE_WEBHOOK: WebhookSpan = { id: 'stable', path: '/hook', events: ['delivered', 'bounced', 'inbound.received'], fromSeq: 0 }

export interface StoredEvent { seq: number, record: EventRecord }

/** Every event of one organisation in OB_EVENTS with its stream sequence, read with an ordered consumer. */
export async function collectEvents (natsUrl: string, orgId: string): Promise<StoredEvent[]> {
  const nc = await connect({ servers: natsUrl })
  try {
    const c = await jetstream(nc).consumers.get(STREAM_EVENTS, { filter_subjects: eventSubject(orgId, '>') })
    let left = (await c.info()).num_pending
    const out: StoredEvent[] = []
    while (left > 0) {
      let got = 0
      for await (const m of await c.fetch({ max_messages: Math.min(left, 1000), expires: 2000 })) {
        out.push({ seq: m.seq, record: m.json<EventRecord>() })
        got++
      }
      if (got === 0) break
      left -= got
    }
    return out
  } finally {
    await nc.close()
  }
}

/** Event ids each webhook received, by webhook id; the stable one over every incarnation of its receiver. */
function receivedBy (w: SoakWorld, replacer: WebhookReplacer): Map<string, Received[]> {
  const out = replacer.received()
  const current = w.receiver.on(STABLE_WEBHOOK.path).map((r) => ({ id: (JSON.parse(r.rawBody.toString()) as { id: string }).id, at: r.at }))
  out.set(STABLE_WEBHOOK.id, [...w.receivedIds, ...current])
  return out
}

interface Owed { span: WebhookSpan, owed: string[], missing: string[], received: Received[] }

/** A repeat: a request that repeats an event id the webhook had already received, `afterMs` its first. */
interface Repeat extends Received { afterMs: number }

/** The requests of one webhook that repeat an event id it had already received, in arrival order. */
function repeatsOf (received: Received[]): Repeat[] {
  const first = new Map<string, number>()
  const out: Repeat[] = []
  for (const r of [...received].sort((a, b) => a.at - b.at)) {
    const at = first.get(r.id)
    if (at === undefined) first.set(r.id, r.at)
    else out.push({ ...r, afterMs: r.at - at })
  }
  return out
}

const DELAY_BUCKETS_S = [1, 4, 6, 30, 55, 65, 120] as const

function byDelay (repeats: Repeat[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const r of repeats) {
    const upper = DELAY_BUCKETS_S.find((b) => r.afterMs < b * 1000)
    const label = upper === undefined ? `>=${DELAY_BUCKETS_S.at(-1)!} s` : `<${upper} s`
    out[label] = (out[label] ?? 0) + 1
  }
  return out
}

function byFault (repeats: Received[], soakStart: number, faults: ReadonlyArray<{ t_s: number, fault: string }>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const r of repeats) {
    const s = (r.at - soakStart) / 1000
    let last = 'none'
    for (const f of faults) if (f.t_s <= s) last = f.fault
    out[last] = (out[last] ?? 0) + 1
  }
  return out
}

function owedPerWebhook (events: StoredEvent[], spans: WebhookSpan[], received: Map<string, Received[]>): Owed[] {
  return spans.map((span) => {
    const owed = events
      .filter((e) => span.events.includes(e.record.type) && e.seq > span.fromSeq && (span.toSeq === undefined || e.seq <= span.toSeq))
      .map((e) => e.record.id)
    const got = received.get(span.id) ?? []
    const gotSet = new Set(got.map((r) => r.id))
    return { span, owed, missing: owed.filter((id) => !gotSet.has(id)), received: got }
  })
}

/** When the second copy of each Message-ID the sink received more than once arrived. */
function secondCopies (w: SoakWorld, counts: Map<string, number>): Received[] {
  const copies = new Map<string, number>()
  const out: Received[] = []
  for (const m of w.sink.messages) {
    if ((counts.get(m.messageId) ?? 0) < 2) continue
    const n = (copies.get(m.messageId) ?? 0) + 1
    copies.set(m.messageId, n)
    if (n === 2) out.push({ id: m.messageId, at: m.receivedAt })
  }
  return out
}

/** Waits until the soak's work is done (or `timeoutMs`), then counts what was lost, repeated or left behind. */
export async function drain (w: SoakWorld, replacer: WebhookReplacer, t: SoakTallies, timeoutMs: number,
  soakStart: number, faults: ReadonlyArray<{ t_s: number, fault: string }>): Promise<SoakChecks> {
  const started = Date.now()
  const deadline = started + timeoutMs
  const want = t.accepted.map((id) => `<${id}@${w.domain}>`)
  let counts = sinkCounts(w.sink)
  while (Date.now() < deadline && !want.every((m) => counts.has(m))) { await sleep(500); counts = sinkCounts(w.sink) }
  const spans = [STABLE_WEBHOOK, ...replacer.spans]
  let events: StoredEvent[] = []
  let owed: Owed[] = []
  for (;;) {
    events = await collectEvents(w.nats.url, w.orgId)
    owed = owedPerWebhook(events, spans, receivedBy(w, replacer))
    const nc = await connect({ servers: w.nats.url })
    const state = await pendingState(nc).finally(async () => { await nc.close() })
    // Idle once no consumer holds or owes anything; messages still stored after delivery are counted apart.
    const idle = state.webhookJobs === 0 && state.consumers.every((c) => c.pending === 0 && c.ackPending === 0)
    if ((owed.every((o) => o.missing.length === 0) && idle) || Date.now() > deadline) break
    await sleep(1000)
  }
  const inboundEvents = events.filter((e) => e.record.type === 'inbound.received').length
  const sum = (f: (o: Owed) => number): number => owed.reduce((n, o) => n + f(o), 0)
  const repeats = owed.map((o) => ({ stable: o.span.id === STABLE_WEBHOOK.id, repeats: repeatsOf(o.received) }))
  return {
    lost: want.filter((m) => !counts.has(m)).length,
    duplicated: [...counts.values()].filter((n) => n > 1).length,
    duplicatedIds: [...counts].filter(([, n]) => n > 1).map(([id]) => id),
    duplicatesByFault: byFault(secondCopies(w, counts), soakStart, faults),
    webhooks: spans.length,
    webhookExpected: sum((o) => o.owed.length),
    webhookLost: sum((o) => o.missing.length),
    webhookRepeats: sum((o) => o.received.length - new Set(o.received.map((r) => r.id)).size),
    repeatsStable: repeats.filter((r) => r.stable).reduce((n, r) => n + r.repeats.length, 0),
    repeatsReplaced: repeats.filter((r) => !r.stable).reduce((n, r) => n + r.repeats.length, 0),
    repeatsByFault: byFault(repeats.flatMap((r) => r.repeats), soakStart, faults),
    repeatsByDelay: byDelay(repeats.flatMap((r) => r.repeats)),
    webhooksMissing: owed
      .filter((o) => o.missing.length > 0)
      .map((o) => ({ id: o.span.id, path: o.span.path, owed: o.owed.length, lost: o.missing.length, firstMissing: o.missing.slice(0, 5) })),
    inboundLost: Math.max(0, t.inboundAccepted - inboundEvents),
    drainS: Math.round((Date.now() - started) / 100) / 10
  }
}

export interface Leftover {
  seq: number
  id: string
  at_sink: boolean
  /** Canceled, so never sent: still stored only because a NATS restart lost its removal (the engine's sweep clears it). */
  canceled?: boolean
}

/**
 * What is still in OB_OUTBOUND, read by sequence, with whether each message already reached the sink: one at the
 * sink that is still stored was delivered, and only its removal from the work queue did not happen.
 */
export async function leftovers (w: SoakWorld, canceled: ReadonlySet<string>, limit = 100_000): Promise<Leftover[]> {
  const nc = await connect({ servers: w.nats.url })
  try {
    const jsm = await jetstreamManager(nc)
    const info = await jsm.streams.info(STREAM_OUTBOUND)
    if (info.state.messages === 0) return []
    const at = sinkCounts(w.sink)
    const out: Leftover[] = []
    const lastSeq = Math.min(info.state.last_seq, info.state.first_seq + limit)
    for (let seq = info.state.first_seq; seq <= lastSeq && out.length < info.state.messages; seq++) {
      const m = await jsm.streams.getMessage(STREAM_OUTBOUND, { seq }).catch(() => null)
      if (m === null) continue
      const id = (m.json<{ id: string }>()).id
      out.push({ seq, id, at_sink: at.has(`<${id}@${w.domain}>`), canceled: canceled.has(id) })
    }
    return out
  } finally {
    await nc.close()
  }
}
