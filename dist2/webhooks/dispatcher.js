import { AnsweredCheck } from './answered_check.js';
import { AttemptSource } from './attempts.js';
import { AttemptOutcomes } from './outcome.js';
import { DirectAttempts } from './direct_attempts.js';
import { EventReader } from './event_reader.js';
import { JobIntake } from './job_intake.js';
import { JobWriter } from './job_writer.js';
/**
 * Webhook delivery attempts of one process, shared by the fan-out and the shard consumers. Attempts come in two
 * ways, both into one AttemptSource (endpoint queues, signing, POST, outcome): job messages from the shard
 * consumers (JobIntake) and first attempts the fan-out makes itself (DirectAttempts). Every job write goes
 * through one JobWriter; acknowledgements go through the AckBatch of whoever made the dispatcher.
 */
export class WebhookDispatcher {
    jobs;
    source;
    intake;
    direct;
    draining = false;
    constructor(config, nc, cp, deliveryLog, http, acks, logger, metrics) {
        this.jobs = new JobWriter(nc, config.engine.shards);
        const storeRetry = async (job) => await this.jobs.storeRetry(job);
        const outcomes = new AttemptOutcomes(config.webhook.retryScheduleS, deliveryLog, cp, storeRetry, acks, logger, metrics);
        const answeredCheck = new AnsweredCheck(deliveryLog);
        this.source = new AttemptSource(config.webhook.endpointConcurrency, cp, http, outcomes, answeredCheck, acks, logger, metrics);
        this.intake = new JobIntake(cp, this.source, this.jobs, new EventReader(nc), acks, logger);
        this.direct = new DirectAttempts(this.source, this.jobs);
    }
    /**
     * Takes one job message (one job or a batch of one webhook's jobs) from a shard consumer; returns at once,
     * the attempts run in the endpoint's queue. Once draining, the message goes straight back.
     */
    accept(m) {
        if (this.draining) {
            m.nak();
            return;
        }
        this.intake.accept(m);
    }
    /**
     * The fast path for attempt 1 (see DirectAttempts.offer). Returns undefined when the endpoint cannot take it, or
     * once draining: the caller parks the job.
     */
    offerDirect(job, webhook, event, body) {
        if (this.draining)
            return undefined;
        return this.direct.offer(job, webhook, event, body);
    }
    /** Parks a first attempt in the job stream (batched per webhook); resolves once it is stored. */
    park(job, eventJson) {
        return this.jobs.park(job, eventJson);
    }
    /** Whether the webhook already answered the event with a 2xx; see AttemptSource.alreadyAnswered. */
    alreadyAnswered(webhookId, job) {
        return this.source.alreadyAnswered(webhookId, job);
    }
    /** Backpressure for the fan-out and the shard consumers; see Endpoints.saturated. */
    saturated() {
        return this.source.endpoints.saturated();
    }
    /** Re-sends a working() for every waiting job so none is redelivered while it waits for its endpoint. */
    keepAlive() {
        this.source.endpoints.keepAlive();
    }
    /** Hands waiting jobs back to the stream and waits for attempts in flight, up to the deadline. */
    async drain(deadline) {
        this.draining = true;
        this.jobs.beginDrain();
        for (const a of this.source.endpoints.takeAllWaiting())
            a.settle.nak();
        await this.jobs.flushAll().catch(() => { });
        while (this.source.endpoints.busy && Date.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 20));
    }
    /** After the drain: job writes still waiting for their acknowledgement fail (their messages come back). */
    close() {
        this.jobs.close();
    }
}
//# sourceMappingURL=dispatcher.js.map