import { DeliveryLog } from '../stores/webhooks/mod.js';
import { ensureJetStream } from '../stores/clients/mod.js';
import { jetStreamSettings, jetStreamTable, tablePart } from '../protocol/mod.js';
import { WebhookHttpClient } from './http_client.js';
import { WebhookDispatcher } from './dispatcher.js';
import { WebhookFanout } from './fanout.js';
import { WebhookJobConsumers } from './job_consumers.js';
import { AckBatch } from './ack_batch.js';
export { signatureHeader, verifySignature } from './sign.js';
/** Starts webhook fan-out and delivery in this process (roles `engine` and `all`). */
export async function startWebhookDelivery(config, shared) {
    const log = shared.log.child({ part: 'webhooks' });
    // The job stream, the fan-out consumer and one job consumer per shard.
    await ensureJetStream(shared.nc, tablePart(jetStreamTable(jetStreamSettings(config)), 'webhooks'));
    const http = new WebhookHttpClient(config);
    // Acknowledgements of the fan-out and of the job consumers, gathered per moment; closed at the end of the drain.
    const acks = new AckBatch();
    const dispatcher = new WebhookDispatcher(config, shared.nc, shared.cp, new DeliveryLog(shared.redis), http, acks, log, shared.metrics);
    const consumers = new WebhookJobConsumers(shared.nc, config.engine.shards, dispatcher, log);
    await consumers.start();
    const fanout = new WebhookFanout(shared.nc, shared.cp, dispatcher, acks, log, shared.metrics);
    await fanout.start();
    const keepAlive = setInterval(() => dispatcher.keepAlive(), Math.max(1000, Math.floor(config.webhook.timeoutMs / 2)));
    keepAlive.unref();
    log.info({ shards: config.engine.shards }, 'webhook delivery started');
    let draining;
    return {
        drain(timeoutMs) {
            draining ??= (async () => {
                const deadline = Date.now() + timeoutMs;
                clearInterval(keepAlive);
                // Stop pulling and, at once, hand waiting jobs back; then let attempts in flight finish.
                const stopped = Promise.all([fanout.stop(deadline), consumers.stop()]);
                await dispatcher.drain(deadline);
                await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref())]);
                acks.close();
                if (Date.now() < deadline)
                    await http.close();
                else
                    await http.destroy();
                dispatcher.close();
            })();
            return draining;
        }
    };
}
//# sourceMappingURL=mod.js.map