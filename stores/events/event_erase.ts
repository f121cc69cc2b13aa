import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { STREAM_EVENTS, eventSubject, type EventRecord } from '../../protocol/mod.ts'
import { deleteIfStored } from '../clients/mod.ts'

/**
 * Erasing an address from OB_EVENTS (POST /v1/privacy/erase). The stream has no index by address, so this reads every
 * event the organisation has on its own subjects (`ob.evt.<org>.>`, at most 30 days of them) once through an ordered
 * consumer, and deletes each one that names the address or belongs to a message being erased, by sequence (the
 * server overwrites the deleted message's bytes). Its cost is one pass over that organisation's events, never
 * another organisation's. Tracking events (opens, clicks, unsubscribes) are events here like any other.
 */

/** An event deleted from the stream, as the read model needs it to erase its copy. */
export interface ErasedEvent { id: string, type: string, timestamp?: string, data: Record<string, unknown>, message_id?: string }

const dec = new TextDecoder()

/** How many messages of the organisation's subjects the stream holds. */
async function storedCount (nc: NatsConnection, orgId: string): Promise<number> {
  const jsm = await jetstreamManager(nc)
  const info = await jsm.streams.info(STREAM_EVENTS, { subjects_filter: eventSubject(orgId, '>') })
  return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0)
}

/** One pass: the sequences and events that name `address` (lower-cased) or belong to one of `messageIds`. */
async function scan (
  nc: NatsConnection, orgId: string, address: string, messageIds: ReadonlySet<string>
): Promise<Array<{ seq: number, event: ErasedEvent }>> {
  if (await storedCount(nc, orgId) === 0) return []
  const consumer = await jetstream(nc).consumers.get(STREAM_EVENTS, {
    filter_subjects: eventSubject(orgId, '>'), deliver_policy: DeliverPolicy.All
  })
  const messages = await consumer.consume()
  const found: Array<{ seq: number, event: ErasedEvent }> = []
  try {
    for await (const m of messages) {
      const text = dec.decode(m.data)
      let e: EventRecord | undefined
      try { e = JSON.parse(text) as EventRecord } catch { e = undefined }
      const mid = e?.message_id ?? (typeof e?.data?.message_id === 'string' ? e.data.message_id : undefined)
      if (text.toLowerCase().includes(address) || (mid !== undefined && messageIds.has(mid))) {
        found.push({
          seq: m.seq,
          event: {
            id: e?.id ?? '', type: e?.type ?? '', data: e?.data ?? {},
            ...(e?.timestamp !== undefined ? { timestamp: e.timestamp } : {}), ...(mid !== undefined ? { message_id: mid } : {})
          }
        })
      }
      if (m.info.pending === 0) break
    }
  } finally {
    messages.stop()
  }
  return found
}

/**
 * Deletes the organisation's stored events that name the address (bare, lower-cased) or belong to one of the messages,
 * and those of any further message an event naming the address belongs to (a second pass, only then). Resolves with
 * the events deleted. `beforeDelete` is given the events found before any is deleted: what other stores keep on an
 * event's account (a received message its `raw` points at) goes first, so that a failure leaves the events for the
 * erase's next run to find again.
 */
export async function eraseStoredEvents (
  nc: NatsConnection, orgId: string, address: string, messageIds: readonly string[],
  beforeDelete?: (found: readonly ErasedEvent[]) => Promise<void>
): Promise<ErasedEvent[]> {
  const ids = new Set(messageIds)
  let found = await scan(nc, orgId, address, ids)
  const more = found.map((f) => f.event.message_id).filter((m): m is string => m !== undefined && !ids.has(m))
  if (more.length > 0) {
    for (const m of more) ids.add(m)
    found = await scan(nc, orgId, address, ids)
  }
  await beforeDelete?.(found.map((f) => f.event))
  const jsm = await jetstreamManager(nc)
  const erased: ErasedEvent[] = []
  for (const f of found) if (await deleteIfStored(jsm, STREAM_EVENTS, f.seq, { overwrite: true })) erased.push(f.event)
  return erased
}
