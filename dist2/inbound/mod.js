import { MessageStore } from '../stores/read_model/mod.js';
import { OBJ_INBOUND_RAW, STREAM_INBOUND, jetStreamSettings } from '../protocol/mod.js';
import { ensureInboundStreams } from './streams.js';
import { startSmtpListener } from './smtp_listener.js';
import { InboundProcessor } from './processor.js';
import { startInboundConsumer } from './consumer.js';
import { AnalysisPool } from './analysis_pool.js';
import { JustStored } from './raw_store.js';
import { ReportDrops } from './report_checks.js';
import { InboundQuotas } from './quotas.js';
import { RedisHealthWatch, StreamRoomWatch } from '../stores/clients/mod.js';
export { MAX_MESSAGE_BYTES } from './smtp_listener.js';
export { resolveRecipient } from './recipients.js';
export { DROP_REASONS } from './report_checks.js';
/** Inbound SMTP and the processing of what it stores, for `OB_ROLE=inbound` and `all`. */
export async function startInbound(config, shared, opts = {}) {
    const log = shared.log.child({ part: 'inbound' });
    const stores = await ensureInboundStreams(shared.nc, jetStreamSettings(config));
    const analysis = new AnalysisPool(config.dnsServers, log, opts.analysisThreadEntry !== undefined ? { entry: opts.analysisThreadEntry } : {});
    const justStored = new JustStored();
    const maxPayload = shared.nc.info?.max_payload ?? 1024 * 1024;
    const drops = new ReportDrops(log, shared.metrics);
    const processor = new InboundProcessor({
        cp: shared.cp,
        messages: new MessageStore(shared.redis),
        drops,
        metrics: shared.metrics,
        stores,
        log,
        analysis,
        justStored,
        // The record's envelope around data takes at most a few KB.
        eventMaxBytes: Math.min(config.inbound.eventMaxBytes, maxPayload - 4096)
    });
    const consumer = await startInboundConsumer(stores.js, processor, log, opts.retryDelaysMs);
    // What the listener accepts ends in events the read model must record: while Redis is full it answers 451.
    const redisHealth = new RedisHealthWatch(shared.redis).start();
    const quotas = new InboundQuotas(config, shared.redis, shared.metrics, log);
    // Mail is taken only below the inbound entries' admission limit (protocol/store_budget.ts says why).
    const room = await new StreamRoomWatch(shared.nc, [STREAM_INBOUND, `OBJ_${OBJ_INBOUND_RAW}`], 0).start();
    const smtp = await startSmtpListener(config, { cp: shared.cp, stores, log, justStored, maxPayload, redis: redisHealth, quotas, room });
    return {
        port: smtp.port,
        async drain(timeoutMs) {
            const deadline = Date.now() + timeoutMs;
            // Half the time for SMTP sessions, the rest for processing what they handed over.
            await smtp.close(Math.max(100, Math.floor(timeoutMs / 2)));
            redisHealth.stop();
            room.stop();
            await consumer.stop(Math.max(100, deadline - Date.now()));
            stores.pub.close();
            await analysis.close();
        }
    };
}
//# sourceMappingURL=mod.js.map