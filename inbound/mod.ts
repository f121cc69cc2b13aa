import type { NatsConnection } from '@nats-io/transport-node'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import { MessageStore } from '../stores/read_model/mod.ts'
import { OBJ_INBOUND_RAW, STREAM_INBOUND, jetStreamSettings } from '../protocol/mod.ts'
import { type ControlPlane } from '../stores/control_plane/mod.ts'
import { ensureInboundStreams } from './streams.ts'
import { startSmtpListener } from './smtp_listener.ts'
import { InboundProcessor } from './processor.ts'
import { startInboundConsumer } from './consumer.ts'
import { AnalysisPool } from './analysis_pool.ts'
import { JustStored } from './raw_store.ts'
import { ReportDrops } from './report_checks.ts'
import { InboundQuotas } from './quotas.ts'
import { DmarcIntake } from './dmarc_intake.ts'
import { DmarcSummaries } from '../stores/dmarc/mod.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'
import { RedisHealthWatch, StreamRoomWatch } from '../stores/clients/mod.ts'

export { MAX_MESSAGE_BYTES } from './smtp_listener.ts'
export { resolveRecipient } from './recipients.ts'
export { DROP_REASONS, type DropReason } from './report_checks.ts'

export interface Inbound {
  /** The bound SMTP port (useful when configured as 0). */
  readonly port: number
  /** Stops accepting SMTP (421 to sessions still open at the deadline), then finishes the messages being processed. */
  drain: (timeoutMs: number) => Promise<void>
}

/** What only tests change. */
export interface InboundTestOptions {
  /** The file the analysis threads load instead of analysis_thread.cts (see AnalysisPool). */
  analysisThreadEntry?: URL
  /** The waits before a job whose processing failed comes back (see startInboundConsumer). */
  retryDelaysMs?: readonly number[]
}

/** Inbound SMTP and the processing of what it stores, for `OB_ROLE=inbound` and `all`. */
export async function startInbound (
  config: Config,
  shared: { nc: NatsConnection, redis: Redis, cp: ControlPlane, log: Logger, metrics: OutboxMetrics },
  opts: InboundTestOptions = {}
): Promise<Inbound> {
  const log = shared.log.child({ part: 'inbound' })
  const stores = await ensureInboundStreams(shared.nc, jetStreamSettings(config))
  const analysis = new AnalysisPool(
    config.dnsServers, log, opts.analysisThreadEntry !== undefined ? { entry: opts.analysisThreadEntry } : {}
  )
  const justStored = new JustStored()
  const maxPayload = shared.nc.info?.max_payload ?? 1024 * 1024
  const drops = new ReportDrops(log, shared.metrics)
  const processor = new InboundProcessor({
    cp: shared.cp,
    messages: new MessageStore(shared.redis, undefined, (org) => shared.cp.readModelRetention(org)),
    drops,
    metrics: shared.metrics,
    stores,
    log,
    analysis,
    justStored,
    // The record's envelope around data takes at most a few KB.
    eventMaxBytes: Math.min(config.inbound.eventMaxBytes, maxPayload - 4096)
  })
  const consumer = await startInboundConsumer(stores.js, processor, log, opts.retryDelaysMs)
  // What the listener accepts ends in events the read model must record: while Redis is full it answers 451.
  const redisHealth = new RedisHealthWatch(shared.redis).start()
  const quotas = new InboundQuotas(config, shared.redis, shared.metrics, log)
  // Mail is taken only below the inbound entries' admission limit (protocol/store_budget.ts says why).
  const room = await new StreamRoomWatch(shared.nc, [STREAM_INBOUND, `OBJ_${OBJ_INBOUND_RAW}`], 0).start()
  const dmarc = new DmarcIntake({ cp: shared.cp, analysis, summaries: new DmarcSummaries(shared.redis), metrics: shared.metrics, log })
  const smtp = await startSmtpListener(config, {
    cp: shared.cp, stores, log, justStored, maxPayload, redis: redisHealth, quotas, room, dmarc
  })
  return {
    port: smtp.port,
    async drain (timeoutMs) {
      const deadline = Date.now() + timeoutMs
      // Half the time for SMTP sessions, the rest for processing what they handed over.
      await smtp.close(Math.max(100, Math.floor(timeoutMs / 2)))
      redisHealth.stop()
      room.stop()
      await consumer.stop(Math.max(100, deadline - Date.now()))
      stores.pub.close()
      await analysis.close()
    }
  }
}
