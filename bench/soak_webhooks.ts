import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { CONSUMER_WEBHOOK_FANOUT, STREAM_EVENTS, eventSubject, type EventRecord } from '../protocol/mod.ts'
import { HttpsReceiver } from '../test/helpers/https_receiver.ts'
import { sleep } from '../test/integration/faults/fault_env.ts'
import type { Received } from './soak_checks.ts'

/**
 * The soak's webhooks and what each must receive. Besides the webhook that lives through the whole run, one
 * webhook is replaced again and again through the API (delete, then create at once, as a user changing its
 * URL does) while mail flows. Each webhook owes every event of its types published while it existed: events of
 * OB_EVENTS with a sequence after the one read once its creation was answered (201), up to the one read before
 * its deletion was asked for. Events published while a create or delete is in flight may go either way and
 * are not counted.
 */
export interface WebhookSpan {
  id: string
  /** The receiver path; unique per webhook, so each request tells which webhook it was for. */
  path: string
  events: readonly string[]
  /** Owed: events with a sequence in (fromSeq, toSeq]; toSeq undefined while (or if) the webhook lives. */
  fromSeq: number
  toSeq?: number
}

export const REPLACED_EVENTS = ['delivered', 'bounced'] as const
/** How long a replaced webhook lives before it is deleted and another one created. */
const REPLACE_EVERY_MS = 5000
/**
 * A user who deletes a webhook gives up its pending deliveries and retries, as documented, and an event the
 * fan-out has not reached yet is one of them. Waiting for them first keeps the check about loss, not about that
 * choice. So before a deletion the replacer waits, at most FANOUT_WAIT_MS, for the fan-out to have acknowledged
 * every event owed (a store fault holds it back for the fault's length plus its backoff), then at most
 * DELIVERED_WAIT_MS for the webhook to receive them (the soak's webhook retry schedule, 145 s in all, and a
 * request timeout). What it has not received by then counts as lost.
 */
const FANOUT_WAIT_MS = 600_000
const DELIVERED_WAIT_MS = 180_000

export class WebhookReplacer {
  readonly spans: WebhookSpan[] = []
  private running = true
  private loop?: Promise<void>

  private constructor (
    /** A receiver of its own that stays up, so a replaced webhook's attempts are not failed by the receiver faults. */
    readonly receiver: HttpsReceiver,
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly baseUrl: string,
    private readonly key: string,
    private readonly orgId: string
  ) {}

  static async start (natsUrl: string, baseUrl: string, key: string, orgId: string): Promise<WebhookReplacer> {
    const receiver = await HttpsReceiver.start()
    // Reconnects through the NATS restarts of the soak.
    const nc = await connect({ servers: natsUrl, maxReconnectAttempts: -1, reconnectTimeWait: 200 })
    const r = new WebhookReplacer(receiver, nc, await jetstreamManager(nc), baseUrl, key, orgId)
    r.loop = r.run()
    return r
  }

  private async run (): Promise<void> {
    let n = 0
    let current = await this.create(n++)
    while (this.running) {
      await sleep(REPLACE_EVERY_MS)
      if (!this.running) break
      // Before the deletion is asked for: everything up to here is owed, and the webhook should have it all
      current.toSeq = await this.retry(async () => await this.lastEventSeq())
      const owed = await this.retry(async () => await this.owedIds(current))
      const fannedOutBy = Date.now() + FANOUT_WAIT_MS
      while (this.running && Date.now() < fannedOutBy && !this.hasAll(current, owed) &&
        (await this.fanOutFloor()) < current.toSeq) await sleep(500)
      const deadline = Date.now() + DELIVERED_WAIT_MS
      while (this.running && Date.now() < deadline && !this.hasAll(current, owed)) await sleep(200)
      // Load over while it waits: it is not deleted (that would give up what it is still owed), it stays as the last.
      if (!this.running && !this.hasAll(current, owed)) { current.toSeq = undefined; break }
      await this.remove(current)
      current = await this.create(n++)
    }
  }

  private async create (n: number): Promise<WebhookSpan> {
    for (let attempt = 0; ; attempt++) {
      // A fresh path per attempt: a create that timed out but happened must not blur another webhook's record.
      const path = `/replaced-${n}-${attempt}`
      const r = await this.call('POST', '/v1/webhooks', { url: this.receiver.url(path), events: REPLACED_EVENTS })
      if (r.status === 201) {
        const fromSeq = await this.retry(async () => await this.lastEventSeq())
        const span: WebhookSpan = { id: (r.body as { id: string }).id, path, events: REPLACED_EVENTS, fromSeq }
        this.spans.push(span)
        return span
      }
      await sleep(200)
    }
  }

  private async remove (w: WebhookSpan): Promise<void> {
    for (;;) {
      const r = await this.call('DELETE', `/v1/webhooks/${w.id}`)
      if (r.status === 204 || r.status === 404) return
      await sleep(200)
    }
  }

  private async call (method: string, path: string, body?: unknown): Promise<{ status: number, body?: unknown }> {
    try {
      const res = await fetch(this.baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${this.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(5000)
      })
      const text = await res.text()
      return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
    } catch {
      return { status: 0 }
    }
  }

  private async lastEventSeq (): Promise<number> {
    return (await this.jsm.streams.info(STREAM_EVENTS)).state.last_seq
  }

  /** The last event sequence up to which the fan-out has acknowledged everything (0 while NATS does not answer). */
  private async fanOutFloor (): Promise<number> {
    try {
      return (await this.jsm.consumers.info(STREAM_EVENTS, CONSUMER_WEBHOOK_FANOUT)).ack_floor.stream_seq
    } catch {
      return 0
    }
  }

  /** Ids of the events of the organisation and of `w`'s types with a sequence in (fromSeq, toSeq]. */
  private async owedIds (w: WebhookSpan): Promise<string[]> {
    const ids: string[] = []
    const prefix = eventSubject(this.orgId, '')
    for (let seq = w.fromSeq + 1; seq <= w.toSeq!; seq++) {
      const m = await this.jsm.streams.getMessage(STREAM_EVENTS, { seq }).catch(() => null)
      if (m === null || !m.subject.startsWith(prefix)) continue
      const e = m.json<EventRecord>()
      if (w.events.includes(e.type)) ids.push(e.id)
    }
    return ids
  }

  private hasAll (w: WebhookSpan, owed: readonly string[]): boolean {
    const got = new Set(this.receiver.on(w.path).map((r) => (JSON.parse(r.rawBody.toString()) as { id: string }).id))
    return owed.every((id) => got.has(id))
  }

  private async retry<T> (fn: () => Promise<T>): Promise<T> {
    for (;;) {
      try { return await fn() } catch { await sleep(200) }
    }
  }

  /** Event ids each webhook received, by webhook id. */
  received (): Map<string, Received[]> {
    const out = new Map<string, Received[]>()
    for (const s of this.spans) {
      out.set(s.id, this.receiver.on(s.path).map((r) => ({ id: (JSON.parse(r.rawBody.toString()) as { id: string }).id, at: r.at })))
    }
    return out
  }

  /** Stops replacing; the last webhook stays and owes every event after its creation. */
  async stop (): Promise<void> {
    this.running = false
    await this.loop
  }

  async close (): Promise<void> {
    await this.nc.close().catch(() => {})
    await this.receiver.close().catch(() => {})
  }
}
