import { Writable } from 'node:stream'
import { scheduleStateKey } from '../../stores/schedule/mod.ts'
import { jetstream, DeliverPolicy } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Config } from '../../config/mod.ts'
import { newId, outboundSubject, shardOf, STREAM_EVENTS, type EventRecord, type QueuedMessage } from '../../protocol/mod.ts'
import { TestOutbox, type TestOrg } from './outbox.ts'
import { SmtpSink, type SinkOptions } from './smtp_sink.ts'
import { eventually } from './waiting.ts'

const enc = new TextEncoder()
const dec = new TextDecoder()

/** A QueuedMessage as the gateway would publish it, from `sender@<org domain>`. */
export function queuedMessage (org: TestOrg, fields: Partial<QueuedMessage> & { to: string[] }): QueuedMessage {
  return {
    v: 1,
    id: newId('msg'),
    org_id: org.orgId,
    domain_id: org.domainId,
    key_id: 'key_00000000000000000000000000',
    environment: 'live',
    from: `Sender <sender@${org.domain}>`,
    cc: [],
    bcc: [],
    subject: 'Hello',
    html: '<p>Hello <a href="https://example.org/welcome">there</a></p>',
    text: 'Hello there',
    headers: {},
    metadata: { user: 'u1' },
    attachments: [],
    track_opens: true,
    track_clicks: true,
    suppressed: [],
    created_at: new Date().toISOString(),
    ...fields
  }
}

/** Publishes to the shard subject with Nats-Msg-Id = message id, exactly as the gateway does. */
export async function publishQueued (nc: NatsConnection, config: Config, msg: QueuedMessage): Promise<void> {
  await jetstream(nc).publish(outboundSubject(shardOf(msg.id, config.engine.shards)), enc.encode(JSON.stringify(msg)), { msgID: msg.id })
}

/**
 * Whether the engine has seen scheduled message `id` before its time and holds it back: the schedule state then
 * names the copy it saw waiting (stores/schedule/mod.ts).
 */
export async function engineHoldsBack (ob: TestOutbox, id: string): Promise<boolean> {
  return await ob.proc.redis.hget(scheduleStateKey(id), 'seq') !== null
}

/** Reads every event of one organisation from OB_EVENTS as it is published. */
export class EventWatcher {
  readonly events: EventRecord[] = []
  private stopFn?: () => void

  static async start (nc: NatsConnection, orgId: string): Promise<EventWatcher> {
    const w = new EventWatcher()
    const consumer = await jetstream(nc).consumers.get(STREAM_EVENTS,
      { filter_subjects: `ob.evt.${orgId}.>`, deliver_policy: DeliverPolicy.All })
    const messages = await consumer.consume()
    w.stopFn = () => { messages.stop() }
    void (async () => {
      for await (const m of messages) w.events.push(JSON.parse(dec.decode(m.data)) as EventRecord)
    })()
    return w
  }

  of (messageId: string, type?: string): EventRecord[] {
    return this.events.filter((e) => e.message_id === messageId && (type === undefined || e.type === type))
  }

  /** Resolves once `predicate` holds; the failure names every event seen. */
  async until (predicate: () => boolean, timeoutMs?: number): Promise<void> {
    await eventually(predicate, () => `events; seen ${JSON.stringify(this.events.map((e) => `${e.type}:${String(e.data.to)}`))}`, timeoutMs)
  }

  stop (): void {
    this.stopFn?.()
  }
}

export interface RelayScenario {
  sink: SmtpSink
  ob: TestOutbox
  org: TestOrg
  events: EventWatcher
  /** The process's log lines, parsed, when `logLevel` was given. */
  logs: Array<Record<string, unknown>>
  close: () => Promise<void>
}

/**
 * An engine-only Outbox that relays every message to an SMTP sink of its own, one organisation, and a watcher of
 * that organisation's events: the setting of most engine scenarios.
 */
export async function startRelayScenario (
  opts: { sink?: SinkOptions, env?: Record<string, string>, logLevel?: string, shardThreadEntry?: URL } = {}
): Promise<RelayScenario> {
  const sink = await SmtpSink.start(opts.sink)
  const logs: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(JSON.parse(String(chunk)) as Record<string, unknown>); cb() } })
  const log = opts.logLevel === undefined ? undefined : { level: opts.logLevel, stream }
  const ob = await TestOutbox.start({
    env: { OB_SMTP_RELAY: sink.url, OB_ROLE: 'engine', ...opts.env },
    ...(log !== undefined ? { log } : {}),
    ...(opts.shardThreadEntry !== undefined ? { shardThreadEntry: opts.shardThreadEntry } : {})
  })
  const org = await ob.org()
  const events = await EventWatcher.start(ob.proc.nc, org.orgId)
  return {
    sink,
    ob,
    org,
    events,
    logs,
    async close () {
      events.stop()
      await ob.close()
      await sink.close()
    }
  }
}
