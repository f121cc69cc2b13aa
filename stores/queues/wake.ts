import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node'
import { STREAM_OUTBOUND, WAKE_HEADER, wakeHeaderValue, type QueueOrderAction, type QueueSelector } from '../../protocol/mod.ts'
import { deleteIfStored } from '../clients/mod.ts'
import type { QueueIndex, WaitingMessage } from './queue_index.ts'

/** Most messages one operator action wakes; the answer says when more are left (the action may be repeated). */
export const MAX_WAKE = 10_000
const PAGE = 200
/** Messages woken at once: each takes three JetStream round trips. */
const PARALLEL = 16
/** A message due within this time is taken up anyway: it is not woken, so no copy meets it in an engine's hands. */
export const WAKE_MARGIN_MS = 2_000

export interface WakeResult {
  /** Messages woken: a copy that the engine takes up now replaced the waiting one. */
  woken: number
  /** Messages due within WAKE_MARGIN_MS, or no longer stored where the index last saw them (being attempted). */
  skipped: number
  /** Whether the queue held more than MAX_WAKE messages: repeat the action for the rest. */
  more: boolean
}

/**
 * Wakes waiting messages of a queue for an operator's retry or bounce. A message handed back to JetStream waits
 * there until its delay ends and cannot be reached before; so each is replaced: a copy of its stream message is
 * published, with the WAKE_HEADER saying what to do (the engine loads its delivery state, as for a redelivery, and
 * does it once), and the waiting one is deleted. The copy's message id (`<id>:wake:<order>`) makes a retried action
 * publish it once. A message whose stored copy is gone is not woken: it is in an engine's hands or done.
 */
export async function wakeWaiting (nc: NatsConnection, index: QueueIndex, selector: QueueSelector, action: QueueOrderAction,
  orderId: string, now = Date.now()): Promise<WakeResult> {
  const jsm = await jetstreamManager(nc)
  const js = jetstream(nc)
  const wakeValue = wakeHeaderValue(action, selector)
  // The ids are read once: woken messages leave the index as the engine takes them up, which would shift any paging.
  const ids = await index.waitingIds(selector, MAX_WAKE + 1)
  const result: WakeResult = { woken: 0, skipped: 0, more: ids.length > MAX_WAKE }
  const wakeOne = async (m: WaitingMessage): Promise<void> => {
    if (m.nextAt <= now + WAKE_MARGIN_MS) { result.skipped++; return }
    const stored = await jsm.streams.getMessage(STREAM_OUTBOUND, { seq: m.seq })
    if (stored === null) { result.skipped++; return }
    const h = natsHeaders()
    h.set(WAKE_HEADER, wakeValue)
    await js.publish(stored.subject, stored.data, { msgID: `${m.id}:wake:${orderId}`, headers: h })
    await deleteIfStored(jsm, STREAM_OUTBOUND, m.seq)
    result.woken++
  }
  for (let at = 0; at < Math.min(ids.length, MAX_WAKE); at += PAGE) {
    const page = await index.waiting(ids.slice(at, Math.min(at + PAGE, MAX_WAKE)))
    for (let i = 0; i < page.length; i += PARALLEL) await Promise.all(page.slice(i, i + PARALLEL).map(wakeOne))
  }
  return result
}
