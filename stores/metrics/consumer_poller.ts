import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { OutboxMetrics } from './outbox_metrics.ts'

/** 5 s: consumer info is one request per consumer; polling on a timer keeps a scrape from costing NATS anything. */
export const CONSUMER_POLL_MS = 5000
const INFO_TIMEOUT_MS = 2000

interface Figures { pending: number, ackPending: number, redelivered: number }

/** The consumers a process works on, by stream and durable name. */
type ConsumerNames = ReadonlyArray<{ stream: string, consumer: string }>

/**
 * Reads pending, acknowledgement-pending and redelivered counts of the JetStream consumers this process works
 * on, every CONSUMER_POLL_MS, into the `outbox_jetstream_consumer_*` gauges. A consumer whose info cannot be read
 * (NATS unreachable, consumer gone) drops out until it can, so a stale figure never looks current.
 */
export class ConsumerPoller {
  private readonly figures = new Map<string, Figures>()
  private timer?: NodeJS.Timeout
  private polling?: Promise<void>

  private constructor (private readonly jsm: JetStreamManager, private readonly consumers: ConsumerNames) {}

  static async start (
    nc: NatsConnection, metrics: OutboxMetrics, consumers: ConsumerNames, everyMs = CONSUMER_POLL_MS
  ): Promise<ConsumerPoller> {
    const poller = new ConsumerPoller(await jetstreamManager(nc, { timeout: INFO_TIMEOUT_MS }), consumers)
    for (const [name, pick] of [
      ['outbox_jetstream_consumer_pending', (f: Figures) => f.pending],
      ['outbox_jetstream_consumer_ack_pending', (f: Figures) => f.ackPending],
      ['outbox_jetstream_consumer_redelivered', (f: Figures) => f.redelivered]
    ] as const) {
      metrics.read(name, (set) => {
        for (const { stream, consumer } of consumers) {
          const f = poller.figures.get(`${stream}/${consumer}`)
          if (f !== undefined) set(pick(f), { stream, consumer })
        }
      })
    }
    poller.polling = poller.poll()
    poller.timer = setInterval(() => { poller.polling ??= poller.poll() }, everyMs)
    poller.timer.unref()
    return poller
  }

  private async poll (): Promise<void> {
    await Promise.all(this.consumers.map(async ({ stream, consumer }) => {
      const key = `${stream}/${consumer}`
      try {
        const info = await this.jsm.consumers.info(stream, consumer)
        this.figures.set(key, { pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered })
      } catch {
        this.figures.delete(key)
      }
    }))
    this.polling = undefined
  }

  async stop (): Promise<void> {
    clearInterval(this.timer)
    await this.polling
  }
}
