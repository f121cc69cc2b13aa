import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { STREAM_EVENTS, STREAM_OUTBOUND, eventSubject, type EventRecord } from '../engine/protocol/mod.ts'
import { pendingState, sinkCounts, sleep } from '../test/integration/faults/fault_env.ts'
import type { SoakWorld } from './soak.ts'

export interface SoakTallies { accepted: string[], statuses: Map<number, number>, inboundSent: number, inboundAccepted: number }

export interface SoakChecks { lost: number, duplicated: number, webhookExpected: number, webhookLost: number, webhookRepeats: number, inboundLost: number, drainS: number }

const WEBHOOK_TYPES = new Set(['delivered', 'bounced', 'inbound.received'])

/** Every event of one organisation in OB_EVENTS, read with an ordered consumer. */
export async function collectEvents (natsUrl: string, orgId: string): Promise<EventRecord[]> {
  const nc = await connect({ servers: natsUrl })
  try {
    const c = await jetstream(nc).consumers.get(STREAM_EVENTS, { filter_subjects: eventSubject(orgId, '>') })
    let left = (await c.info()).num_pending
    const out: EventRecord[] = []
    while (left > 0) {
      let got = 0
      for await (const m of await c.fetch({ max_messages: Math.min(left, 1000), expires: 2000 })) { out.push(m.json<EventRecord>()); got++ }
      if (got === 0) break
      left -= got
    }
    return out
  } finally {
    await nc.close()
  }
}

/** Event ids the receiver got, over every incarnation of it (`w.receivedIds` keeps those of closed ones). */
function receivedIds (w: SoakWorld): string[] {
  return [...w.receivedIds, ...w.receiver.on('/hook').map((r) => (JSON.parse(r.rawBody.toString()) as { id: string }).id)]
}

/** Waits until the soak's work is done (or `timeoutMs`), then counts what was lost, repeated or left behind. */
export async function drain (w: SoakWorld, t: SoakTallies, timeoutMs: number): Promise<SoakChecks> {
  const started = Date.now()
  const deadline = started + timeoutMs
  const want = t.accepted.map((id) => `<${id}@${w.domain}>`)
  let counts = sinkCounts(w.sink)
  while (Date.now() < deadline && !want.every((m) => counts.has(m))) { await sleep(500); counts = sinkCounts(w.sink) }
  let events: EventRecord[] = []
  let missing: string[] = []
  for (;;) {
    events = await collectEvents(w.nats.url, w.orgId)
    const got = new Set(receivedIds(w))
    const nc = await connect({ servers: w.nats.url })
    const state = await pendingState(nc).finally(async () => { await nc.close() })
    // Idle once no consumer holds or owes anything; messages still stored after delivery are counted apart.
    const idle = state.webhookJobs === 0 && state.consumers.every((c) => c.pending === 0 && c.ackPending === 0)
    missing = events.filter((e) => WEBHOOK_TYPES.has(e.type) && !got.has(e.id)).map((e) => e.id)
    if ((missing.length === 0 && idle) || Date.now() > deadline) break
    await sleep(1000)
  }
  const ids = receivedIds(w)
  const inboundEvents = events.filter((e) => e.type === 'inbound.received').length
  return {
    lost: want.filter((m) => !counts.has(m)).length,
    duplicated: [...counts.values()].filter((n) => n > 1).length,
    webhookExpected: events.filter((e) => WEBHOOK_TYPES.has(e.type)).length,
    webhookLost: missing.length,
    webhookRepeats: ids.length - new Set(ids).size,
    inboundLost: Math.max(0, t.inboundAccepted - inboundEvents),
    drainS: Math.round((Date.now() - started) / 100) / 10
  }
}

export interface Leftover { seq: number, id: string, at_sink: boolean }

/**
 * What is still in OB_OUTBOUND, read by sequence, with whether each message already reached the sink: one at the
 * sink that is still stored was delivered, and only its removal from the work queue did not happen.
 */
export async function leftovers (w: SoakWorld, limit = 100_000): Promise<Leftover[]> {
  const nc = await connect({ servers: w.nats.url })
  try {
    const jsm = await jetstreamManager(nc)
    const info = await jsm.streams.info(STREAM_OUTBOUND)
    if (info.state.messages === 0) return []
    const at = sinkCounts(w.sink)
    const out: Leftover[] = []
    for (let seq = info.state.first_seq; seq <= Math.min(info.state.last_seq, info.state.first_seq + limit) && out.length < info.state.messages; seq++) {
      const m = await jsm.streams.getMessage(STREAM_OUTBOUND, { seq }).catch(() => null)
      if (m === null) continue
      const id = (m.json<{ id: string }>()).id
      out.push({ seq, id, at_sink: at.has(`<${id}@${w.domain}>`) })
    }
    return out
  } finally {
    await nc.close()
  }
}
