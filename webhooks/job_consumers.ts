import { jetstream, type ConsumerMessages } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import { STREAM_WEBHOOK_JOBS, webhookJobConsumer } from '../protocol/mod.ts'
import type { WebhookDispatcher } from './dispatcher.ts'

const PAUSE_MS = 5

/**
 * One durable pull consumer per shard on the job stream (work queue, `ob.whjob.<shard>.>`). Several engine
 * processes share each consumer, so a shard's jobs go to whichever process pulls. A retry that is not yet
 * due is `nak(delay)`ed: the server keeps that delay, so it survives an engine restart. The caller has ensured
 * the consumers (jetstream_table.ts).
 */
export class WebhookJobConsumers {
  private readonly running: Array<{ messages: ConsumerMessages, loop: Promise<void> }> = []

  constructor (
    private readonly nc: NatsConnection,
    private readonly shards: number,
    private readonly dispatcher: WebhookDispatcher,
    private readonly log: Logger
  ) {}

  async start (): Promise<void> {
    const js = jetstream(this.nc)
    for (let shard = 0; shard < this.shards; shard++) {
      const consumer = await js.consumers.get(STREAM_WEBHOOK_JOBS, webhookJobConsumer(shard))
      const messages = await consumer.consume({ max_messages: 256 })
      const loop = (async () => {
        for await (const m of messages) {
          while (this.dispatcher.saturated()) await new Promise((resolve) => setTimeout(resolve, PAUSE_MS))
          this.dispatcher.accept(m)
        }
      })().catch((err: unknown) => this.log.error({ err, shard }, 'webhook job consumer stopped'))
      this.running.push({ messages, loop })
    }
  }

  async stop (): Promise<void> {
    await Promise.all(this.running.map(async (r) => {
      await r.messages.close().catch(() => {})
      await r.loop
    }))
  }
}
