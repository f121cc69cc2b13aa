import { Endpoints, handBackMs } from './endpoints.js';
import { deliverable, held, pausedWaitMs } from './job_eligibility.js';
import { signedHeaders } from './sign.js';
/** An attempt that threw (not a receiver's answer) is made again after this long. */
const ATTEMPT_FAULT_RETRY_MS = 5000;
/**
 * The one place attempts are made, whichever way their job came (read from the job stream, or handed over by the
 * fan-out as a first attempt): each is queued at its endpoint and, when its slot comes, checked against the
 * webhook's current record, signed over the exact body sent, POSTed, and handed to AttemptOutcomes.
 */
export class AttemptSource {
    cp;
    http;
    outcomes;
    answeredCheck;
    acks;
    logger;
    metrics;
    endpoints;
    constructor(concurrency, cp, http, outcomes, answeredCheck, acks, logger, metrics) {
        this.cp = cp;
        this.http = http;
        this.outcomes = outcomes;
        this.answeredCheck = answeredCheck;
        this.acks = acks;
        this.logger = logger;
        this.metrics = metrics;
        this.endpoints = new Endpoints(concurrency, async (a) => await this.make(a), (err, a) => { this.failed(err, a); });
    }
    /** Where the webhook's attempts go; undefined when its URL does not parse. */
    target(webhook) {
        return this.endpoints.target(webhook);
    }
    /**
     * Queues an attempt at its target's queue (`attempt.url` is the target's); when the endpoint filled up meanwhile
     * (an event was being read), it waits in the stream.
     */
    offer(target, attempt) {
        if (!target.queue.offer(attempt))
            attempt.settle.nak(handBackMs(target.queue, Date.now()));
    }
    /** A job whose webhook URL does not parse: an attempt that fails as `invalid_url` without a request. */
    failInvalidUrl(settle, job, webhook) {
        void this.outcomes.settle(settle, job, webhook, { statusCode: 0, durationMs: 0, error: 'invalid_url' }, new Date());
    }
    /**
     * Whether the webhook already answered the event with a 2xx, for work JetStream handed out again (see
     * AnsweredCheck); such a repeat is counted and left unsent. Replays and test events are never asked about: they are
     * sent again on purpose.
     */
    async alreadyAnswered(webhookId, job) {
        if (job.replay === true || job.test === true)
            return false;
        const answered = await this.answeredCheck.answered(webhookId, job.event);
        if (answered)
            this.metrics.webhookRepeatsSkipped.inc();
        return answered;
    }
    async make(a) {
        // The record may have changed while the job waited for a slot.
        const current = this.cp.webhooks.get(`${a.job.org_id}.${a.job.webhook_id}`);
        if (held(a.job, current)) {
            a.settle.nak(pausedWaitMs());
            return;
        }
        if (!deliverable(a.job, current)) {
            this.acks.add(a.settle);
            return;
        }
        // Asked here, in the endpoint's slot, so work handed out again waits and counts in the queue like any other.
        if (a.recheck === true && await this.alreadyAnswered(current.id, a.job)) {
            this.acks.add(a.settle);
            return;
        }
        const at = new Date();
        const body = a.body ?? Buffer.from(JSON.stringify(a.job.event));
        const result = await this.http.post(current.org_id, a.url, body, signedHeaders(current, a.job.event.id, body, at.getTime()));
        await this.outcomes.settle(a.settle, a.job, current, result, at);
    }
    /**
     * An attempt that threw instead of settling (a fault in Outbox or a damaged webhook record, not an answer
     * of the receiver): logged without the record (it holds the secret), and its job comes back after a delay.
     */
    failed(err, a) {
        this.logger.error({ err, webhook_id: a.job.webhook_id, event_id: a.job.event.id, attempt: a.job.attempt }, 'webhook attempt failed unexpectedly; it will be made again');
        a.settle.nak(ATTEMPT_FAULT_RETRY_MS);
    }
}
//# sourceMappingURL=attempts.js.map