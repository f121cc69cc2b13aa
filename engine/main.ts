import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import type { ControlPlane } from '../stores/control_plane/mod.ts'
import {
  installationSecret, STREAM_OUTBOUND, outboundConsumer, outboundSubject, jetStreamSettings, jetStreamTable, tablePart
} from '../protocol/mod.ts'
import { ensureJetStream, JsPublisher } from '../stores/clients/mod.ts'
import { MessageStore } from '../stores/read_model/mod.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'
import { DeliveryState } from './delivery_state.ts'
import { ScheduleLedger, ScheduleState, SCHEDULE_STATE_TTL_MS } from '../stores/schedule/mod.ts'
import { ShardDispatcher } from './dispatcher.ts'
import { ConnectionEpoch } from './connection_epoch.ts'
import { StoredContentProcessor } from './stored_content.ts'
import { openContentStore } from '../stores/content/mod.ts'
import { MessageContentStore } from '../stores/message_content/mod.ts'
import { ContentRecorder } from './content_recorder.ts'
import { ShardActors } from './shards.ts'
import { STALLED_AFTER_MS, flightsEndedWithinMs } from './actor/fenced_sends.ts'
import { WorkQueueSweeper } from './work_queue_sweep.ts'
import { EgressState } from '../stores/egress/mod.ts'
import { LaneGauges } from './egress/lane_gauges.ts'
import { reportRecovery } from './egress/lane_recoveries.ts'
import { LeaseTable, ShardFences, openLeaseBucket, processOwnerId, renewIntervalMs } from './leases/mod.ts'
import { QueueIndex } from '../stores/queues/mod.ts'
import { TlsReportStore } from '../stores/tls_reports/mod.ts'
import { TlsReporter, type TlsReportRun } from './tls/tls_reporter.ts'
import { trustedCas } from './tls/outbound_tls.ts'
import { reportSender } from './tls/tls_report_mailer.ts'
import { relayDestination } from './actor/transports.ts'
import { readFileSync } from 'node:fs'

export interface Engine {
  /** This process's id in the shard lease bucket. */
  readonly ownerId: string
  /** The shards this process holds leases on right now. */
  readonly ownedShards: readonly number[]
  /** One sweep of the held shards' work queue now, besides the periodic ones (engine/work_queue_sweep.ts). */
  sweep: (full: boolean) => Promise<void>
  /** Stops taking work, finishes or hands back what is in flight, within `timeoutMs`. */
  drain: (timeoutMs: number) => Promise<void>
  /** One run of the TLS-RPT sender now (it also runs every OB_TLSRPT_CHECK_MS), as if the time were `now`. */
  sendTlsReports: (now?: number) => Promise<TlsReportRun>
}

export async function startEngine (
  config: Config,
  shared: { nc: NatsConnection, redis: Redis, cp: ControlPlane, log: Logger, metrics: OutboxMetrics },
  shardThreadEntry?: URL
): Promise<Engine> {
  const log = shared.log.child({ part: 'engine' })
  const shards = Array.from({ length: config.engine.shards }, (_v, i) => i)
  await ensureJetStream(shared.nc, tablePart(jetStreamTable(jetStreamSettings(config)), 'delivery'))
  const secret = await installationSecret(shared.cp.settings, config.secret)
  // threads are sized for every shard: leases move shards between processes at any time
  const threads = Math.min(config.engine.threads, shards.length)
  // read once: the shard threads get the PEM, not the path
  const caPem = config.smtp.caFile !== undefined ? readFileSync(config.smtp.caFile, 'utf8') : undefined
  const sender = reportSender(config.smtp.reportSender)
  if (sender === undefined && config.smtp.relay === undefined) {
    log.warn('TLS reports to mailto: addresses are not sent: no report sender (set OB_REPORT_FROM, OB_REPORT_DKIM_SELECTOR and ' +
      'OB_REPORT_DKIM_KEY_FILE); https: ones are')
  }
  if (config.smtp.relay !== undefined && config.smtp.relayTls === 'insecure') {
    log.warn({ relay: new URL(config.smtp.relay).host }, 'OB_SMTP_RELAY_TLS=insecure: the relay\'s certificate is not checked and ' +
      'its credentials may be sent without TLS, to anyone in the path')
  }
  const fences = new ShardFences(shards.length)
  // below the ack_wait after which the shard's new owner may have the message
  const stalledAfterMs = Math.min(STALLED_AFTER_MS, Math.floor(config.engine.ackWaitMs / 2))
  const actors = new ShardActors({
    redis: config.redis.target,
    ...(config.smtp.relay !== undefined ? { relay: config.smtp.relay } : {}),
    relayTls: config.smtp.relayTls,
    ...(caPem !== undefined ? { caPem } : {}),
    stsPort: config.smtp.mtaStsPort,
    outboundPort: config.smtp.outboundPort,
    allowPrivate: config.smtp.allowPrivate,
    dnsServers: [...config.dnsServers],
    poolConnections: config.smtp.poolConnections,
    hostRatePerS: config.delivery.hostRatePerS,
    egressShaping: config.smtp.egressShaping,
    egressRecoverEveryMs: config.smtp.egressRecoverEveryMs,
    egressConnectionHoldMs: config.smtp.egressConnectionHoldMs,
    publicUrl: config.http.publicUrl,
    secret: new Uint8Array(secret),
    fences: fences.buffer,
    stalledAfterMs
  }, threads, Math.ceil(shards.length / threads), config.engine.shardCapacity, shared.metrics, log, shardThreadEntry)
  const js = jetstream(shared.nc)
  // Delivery events are published through one reply subscription, not a request per event (see JsPublisher).
  const events = new JsPublisher(shared.nc)
  // OB_MESSAGE_CONTENT_RETENTION_DAYS=0: no recorder, so no message is rendered, compressed or published for its
  // content view (GET /v1/messages/{id}/content answers that this installation records none).
  const content = config.messageContent.retentionDays > 0
    ? new ContentRecorder(new MessageContentStore(await jetstreamManager(shared.nc), events), log)
    : undefined
  const schedule = new ScheduleState(
    shared.redis, await ScheduleLedger.open(shared.nc, config.nats.replicas, SCHEDULE_STATE_TTL_MS, config.nats.storeBytes)
  )
  const processor = new StoredContentProcessor({
    config,
    js: events,
    cp: shared.cp,
    state: new DeliveryState(shared.redis),
    readModel: new MessageStore(shared.redis, undefined, (org) => shared.cp.readModelRetention(org)),
    content,
    schedule,
    actors,
    log,
    metrics: shared.metrics,
    queueIndex: new QueueIndex(shared.redis),
    fences
  }, await openContentStore(shared.nc, config))
  const epoch = new ConnectionEpoch(shared.nc)
  const consumers = await Promise.all(shards.map(async (shard) => await js.consumers.get(STREAM_OUTBOUND, outboundConsumer(shard))))
  const dispatchers = new Map<number, ShardDispatcher>()
  /** Shards being drained (released, lost or shutting down); a second stop waits for the same drain. */
  const handingOver = new Map<number, Promise<void>>()
  const ownerId = processOwnerId()
  const leaseBucket = await openLeaseBucket(
    shared.nc, config.nats.replicas, Math.max(1000, renewIntervalMs(config.engine.leaseMs)), config.nats.storeBytes
  )
  const leases = new LeaseTable(leaseBucket, {
    group: 'outbound',
    units: shards.length,
    ownerId,
    leaseMs: config.engine.leaseMs,
    renewMs: renewIntervalMs(config.engine.leaseMs),
    drainMs: config.engine.ackWaitMs,
    fences,
    log,
    start (shard, fence, expiredOwner) {
      // taken from a process whose lease ran out: the messages it may have had in flight wait until its sends ended
      const repeatsFrom = expiredOwner !== undefined ? Date.now() + flightsEndedWithinMs(stalledAfterMs) : 0
      const d = new ShardDispatcher(
        shard, consumers[shard]!, processor, config.engine.shardCapacity, config.engine.ackWaitMs, log, fence, epoch, repeatsFrom
      )
      dispatchers.set(shard, d)
      d.start()
    },
    async stop (shard, deadline) {
      const d = dispatchers.get(shard)
      if (d !== undefined) {
        dispatchers.delete(shard)
        handingOver.set(shard, d.drain(deadline).finally(() => handingOver.delete(shard)))
      }
      await handingOver.get(shard)
    }
  })
  await leases.start()
  // every shard, 0 or 1: a shard that no engine reports as 1 is delivered by nobody (ops/prometheus/alerts.yml)
  shared.metrics.read('outbox_shard_owned', (set) => {
    const held = new Set(leases.units())
    for (const shard of shards) set(held.has(shard) ? 1 : 0, { shard: String(shard) })
  })
  const sweeper = new WorkQueueSweeper({
    io: { nc: shared.nc, jsm: await jetstreamManager(shared.nc) },
    everyMs: config.engine.sweepMs,
    stream: STREAM_OUTBOUND,
    target: (shard) => ({ consumer: outboundConsumer(shard), subject: outboundSubject(shard) }),
    shards: () => leases.units(),
    settled: async (data) => await processor.settleIfFinal(data),
    reconnects: reconnectsOf(shared.nc),
    onSwept: (shard, r) => log.warn({ shard, ...r },
      'cleared what a NATS restart left in the shard: finished messages still stored, un-acknowledged entries of removed ones'),
    onError: (shard, err) => log.warn({ err, shard }, 'work-queue sweep failed; tried again later')
  })
  sweeper.start()
  const laneGauges = config.smtp.egressShaping && config.smtp.relay === undefined
    ? new LaneGauges(new EgressState(shared.redis, Date.now, {
      // the engines' own recovery period, and the recovery steps of lanes no mail used meanwhile: claimed here
      recoverEveryMs: config.smtp.egressRecoverEveryMs,
      onRecovery: (r) => { reportRecovery(shared.metrics, log, r) }
    }), shared.cp, shared.metrics, log)
    : undefined
  // through the relay nothing is counted, but days counted before it was set are still reported
  const reporter = tlsReporter(config, { redis: shared.redis, metrics: shared.metrics, log }, caPem, sender)
  reporter.start(config.smtp.tlsReportCheckMs)
  log.info({ owner: ownerId, shards: shards.length, held: leases.units(), threads, relay: config.smtp.relay ?? null }, 'engine started')
  let draining: Promise<void> | undefined
  return {
    ownerId,
    get ownedShards () { return leases.units() },
    async sweep (full) { await sweeper.sweep(full) },
    async sendTlsReports (now) { return await reporter.run(now) },
    drain (timeoutMs) {
      draining ??= (async () => {
        const deadline = Date.now() + timeoutMs
        sweeper.stop()
        reporter.stop()
        epoch.stop()
        laneGauges?.close()
        // drains every shard, then deletes its lease so the other engines take it over at their next renew
        await leases.close(deadline)
        await actors.close()
        events.close()
        log.info('engine drained')
      })()
      return draining
    }
  }
}

/**
 * The reports name this installation by the host of its public URL; their contact is that host's postmaster. Mailed
 * reports go as the engine's mail does: through the relay when there is one, else to MX hosts.
 */
function tlsReporter (
  config: Config, shared: { redis: Redis, metrics: OutboxMetrics, log: Logger }, caPem: string | undefined,
  sender: ReturnType<typeof reportSender>
): TlsReporter {
  const host = new URL(config.http.publicUrl).hostname
  const relay = config.smtp.relay !== undefined ? relayDestination(config.smtp.relay, config.smtp.relayTls) : undefined
  return new TlsReporter({
    store: new TlsReportStore(shared.redis),
    dnsServers: config.dnsServers,
    allowPrivate: config.smtp.allowPrivate,
    ca: trustedCas(caPem),
    organization: host,
    contact: `postmaster@${config.http.mxHost ?? host}`,
    log: shared.log,
    ...(sender !== undefined ? { mail: { sender, port: config.smtp.outboundPort, ...(relay !== undefined ? { relay } : {}) } } : {}),
    count: (transport, result) => { shared.metrics.tlsReports[transport][result].inc() }
  })
}

async function * reconnectsOf (nc: NatsConnection): AsyncIterable<void> {
  for await (const s of nc.status()) if (s.type === 'reconnect') yield
}
