import { jetstream } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { STREAM_EVENTS, eventSubject, type EventRecord } from '../../protocol/mod.ts'

/**
 * Reads an organisation's events from OB_EVENTS (an ordered consumer from the start of the stream), as the
 * webhook sender would. `waitFor` resolves once `count` events of `type` are there, or rejects after `timeoutMs`.
 */
export class EventReader {
  readonly events: EventRecord[] = []
  private readonly listeners = new Set<() => void>()
  private stopFn?: () => void

  private constructor (readonly orgId: string) {}

  static async open (nc: NatsConnection, orgId: string): Promise<EventReader> {
    const r = new EventReader(orgId)
    const consumer = await jetstream(nc).consumers.get(STREAM_EVENTS, { filter_subjects: eventSubject(orgId, '>') })
    const messages = await consumer.consume()
    r.stopFn = () => { void messages.close() }
    void (async () => {
      for await (const m of messages) {
        r.events.push(m.json<EventRecord>())
        for (const l of r.listeners) l()
      }
    })()
    return r
  }

  of (type: string): EventRecord[] {
    return this.events.filter((e) => e.type === type)
  }

  async waitFor (type: string, count = 1, timeoutMs = 10_000): Promise<EventRecord[]> {
    if (this.of(type).length >= count) return this.of(type)
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(check)
        reject(new Error(`timed out waiting for ${count} ${type} event(s); have ${this.events.map((e) => e.type).join(',') || 'none'}`))
      }, timeoutMs)
      const check = (): void => {
        if (this.of(type).length < count) return
        clearTimeout(timer)
        this.listeners.delete(check)
        resolve(this.of(type))
      }
      this.listeners.add(check)
    })
  }

  /** Lets anything in flight arrive, for assertions that something did NOT happen. */
  async settle (ms = 500): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, ms))
  }

  close (): void {
    this.stopFn?.()
  }
}
