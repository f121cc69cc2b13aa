import { jetstreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import { DeliveryLog } from '../stores/webhooks/mod.ts'
import { ensureJetStream } from '../stores/clients/mod.ts'
import { jetStreamSettings, jetStreamTable, tablePart } from '../protocol/mod.ts'
import { type ControlPlane } from '../stores/control_plane/mod.ts'
import { WebhookHttpClient } from './http_client.ts'
import { WebhookDispatcher } from './dispatcher.ts'
import { WebhookFanout } from './fanout.ts'
import { WebhookJobConsumers } from './job_consumers.ts'
import { AckBatch } from './ack_batch.ts'
import { JobGhostRelease } from './job_ghosts.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'

export { signatureHeader, verifySignature } from './sign.ts'

export interface WebhookDelivery {
  /** Stops pulling, hands queued jobs back, lets attempts in flight finish (up to `timeoutMs`). */
  drain: (timeoutMs: number) => Promise<void>
}

/** Starts webhook fan-out and delivery in this process (roles `engine` and `all`). */
export async function startWebhookDelivery (
  config: Config, shared: { nc: NatsConnection, redis: Redis, cp: ControlPlane, log: Logger, metrics: OutboxMetrics }
): Promise<WebhookDelivery> {
  const log = shared.log.child({ part: 'webhooks' })
  // The job stream, the fan-out consumer and one job consumer per shard.
  await ensureJetStream(shared.nc, tablePart(jetStreamTable(jetStreamSettings(config)), 'webhooks'))
  const http = new WebhookHttpClient(config)
  // Acknowledgements of the fan-out and of the job consumers, gathered per moment; closed at the end of the drain.
  const acks = new AckBatch()
  const deliveryLog = new DeliveryLog(shared.redis)
  const dispatcher = new WebhookDispatcher(config, shared.nc, shared.cp, deliveryLog, http, acks, log, shared.metrics)
  const consumers = new WebhookJobConsumers(shared.nc, config.engine.shards, dispatcher, log)
  await consumers.start()
  // what a NATS restart can leave in the shard consumers: entries of jobs no longer stored, never delivered again
  const io = { nc: shared.nc, jsm: await jetstreamManager(shared.nc) }
  const ghosts = new JobGhostRelease(io, config.engine.shards, config.engine.sweepMs, log)
  ghosts.start()
  const fanout = new WebhookFanout(shared.nc, shared.cp, dispatcher, acks, log, shared.metrics)
  await fanout.start()
  const keepAlive = setInterval(() => dispatcher.keepAlive(), Math.max(1000, Math.floor(config.webhook.timeoutMs / 2)))
  keepAlive.unref()
  log.info({ shards: config.engine.shards }, 'webhook delivery started')
  let draining: Promise<void> | undefined
  return {
    drain (timeoutMs) {
      draining ??= (async () => {
        const deadline = Date.now() + timeoutMs
        clearInterval(keepAlive)
        ghosts.stop()
        // Stop pulling and, at once, hand waiting jobs back; then let attempts in flight finish.
        const stopped = Promise.all([fanout.stop(deadline), consumers.stop()])
        await dispatcher.drain(deadline)
        await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref())])
        acks.close()
        if (Date.now() < deadline) await http.close()
        else await http.destroy()
        dispatcher.close()
        // The attempts made during the drain, written before Redis is closed by the caller.
        await deliveryLog.close().catch((err: unknown) => log.warn({ err }, 'cannot record the last webhook delivery attempts'))
      })()
      return draining
    }
  }
}
