import { EndpointQueue } from './endpoint_queue.js';
/** Jobs waiting per endpoint beyond those in flight; more are handed back to the stream until it catches up. */
const MAX_WAITING_PER_ENDPOINT = 1000;
/** Jobs waiting at endpoints that keep pace; above it (or a second of their work) the engine stops taking work. */
const MAX_MOVING_BACKLOG = 128;
/** The backlog is summed again after this many accepted jobs or this long, whichever comes first. */
const BACKLOG_CHECK_JOBS = 32;
const BACKLOG_CHECK_MS = 5;
/** Parsed webhook URLs kept; past this many the cache starts over. */
const MAX_URLS = 10_000;
/** How long work an endpoint cannot take now waits in the job stream: until it likely has room, spread by up to half. */
export function handBackMs(q, now) {
    return Math.round(q.retryLaterMs(now) * (1 + Math.random() * 0.5));
}
/**
 * Every endpoint queue of the process, and the backpressure they exert together. An endpoint is an organisation's
 * endpoint origin: each organisation has its own queue and slots for an origin (and its own connections, see
 * WebhookHttpClient), so a receiver that one organisation points at a host shared with others (an integration hub)
 * spends only that organisation's slots when it is slow. Queues are made on first use and dropped once idle.
 */
export class Endpoints {
    concurrency;
    run;
    failed;
    /** organisation id → endpoint origin → its queue. */
    byOrg = new Map();
    /** webhook id → its endpoint's queue, for handing back a stalled endpoint's jobs without reading them. */
    queueOf = new Map();
    urls = new Map();
    backlogCheckedAt = 0;
    acceptedSinceCheck = 0;
    full = false;
    /** `run` and `failed`: see EndpointQueue. */
    constructor(concurrency, run, failed) {
        this.concurrency = concurrency;
        this.run = run;
        this.failed = failed;
    }
    /** Where the webhook's attempts go; undefined when its URL does not parse. */
    target(webhook) {
        const parsed = this.urlOf(webhook.url);
        if (parsed === undefined)
            return undefined;
        const queue = this.queue(webhook.org_id, parsed.origin);
        this.queueOf.set(webhook.id, queue);
        return { url: parsed.url, queue };
    }
    /** The queue of the webhook's endpoint when it is known to be stalled: every slot busy, and not keeping pace. */
    stalled(webhookId, now) {
        const known = this.queueOf.get(webhookId);
        return known !== undefined && known.freeSlots === 0 && !known.keepsPace(now) ? known : undefined;
    }
    /**
     * The webhook's URL parsed once (not per event), and the same object every time, so that the HTTP client
     * can keep what it derives from it; undefined when it does not parse.
     */
    urlOf(href) {
        let parsed = this.urls.get(href);
        if (parsed === undefined) {
            if (this.urls.size >= MAX_URLS)
                this.urls.clear();
            try {
                const url = new URL(href);
                parsed = { url, origin: url.origin };
            }
            catch {
                parsed = null;
            }
            this.urls.set(href, parsed);
        }
        return parsed ?? undefined;
    }
    queue(orgId, origin) {
        let ofOrg = this.byOrg.get(orgId);
        if (ofOrg === undefined) {
            ofOrg = new Map();
            this.byOrg.set(orgId, ofOrg);
        }
        let q = ofOrg.get(origin);
        if (q === undefined) {
            q = new EndpointQueue(this.concurrency, MAX_WAITING_PER_ENDPOINT, this.run, this.failed);
            ofOrg.set(origin, q);
        }
        return q;
    }
    /** Every endpoint queue, of every organisation. */
    *queues() {
        for (const ofOrg of this.byOrg.values())
            yield* ofOrg.values();
    }
    /**
     * Backpressure for the fan-out and the shard consumers: true while the endpoints that keep pace already
     * hold about a second of their work. Dead or slow receivers do not count, so they cannot stop the pull for
     * healthy ones; their overflow waits in the job stream instead.
     */
    saturated() {
        const now = Date.now();
        if (++this.acceptedSinceCheck < BACKLOG_CHECK_JOBS && now - this.backlogCheckedAt < BACKLOG_CHECK_MS)
            return this.full;
        this.backlogCheckedAt = now;
        this.acceptedSinceCheck = 0;
        // Endpoints that have answered pace the fan-out. One that never answered yet (new, or dead from the start)
        // does not, unless no endpoint has answered yet: else a receiver that hangs from its first request would
        // hold every other endpoint back until it is found stalled.
        const answered = { backlog: 0, capacity: 0 };
        const unanswered = { backlog: 0, capacity: 0 };
        for (const q of this.queues()) {
            // Work that waits here for an endpoint that stopped keeping pace goes back to the job stream.
            if (q.waiting.length > 0 && !q.keepsPace(now))
                for (const w of q.takeWaiting())
                    w.settle.nak(handBackMs(q, now));
            const p = q.pacing(now);
            const sum = q.answered ? answered : unanswered;
            sum.backlog += p.waiting;
            sum.capacity += p.capacity;
        }
        const { backlog, capacity } = answered.capacity > 0 ? answered : unanswered;
        // Full when the endpoints that keep pace hold about a second of their work (or the absolute limit).
        this.full = capacity > 0 && backlog >= Math.min(MAX_MOVING_BACKLOG, capacity);
        return this.full;
    }
    /** Re-sends a working() for every waiting item so none is redelivered while it waits; drops idle queues. */
    keepAlive() {
        for (const q of this.queues())
            for (const w of q.waiting)
                w.settle.working();
        for (const [orgId, ofOrg] of this.byOrg) {
            for (const [origin, q] of ofOrg)
                if (q.idle)
                    ofOrg.delete(origin);
            if (ofOrg.size === 0)
                this.byOrg.delete(orgId);
        }
        // the same test as above, in the same turn: exactly the queues just removed
        for (const [id, q] of this.queueOf)
            if (q.idle)
                this.queueOf.delete(id);
    }
    /** Takes every waiting item out of every queue (shutdown hands them back to the stream). */
    takeAllWaiting() {
        return [...this.queues()].flatMap((q) => q.takeWaiting());
    }
    /** Whether any attempt is in flight. */
    get busy() {
        return [...this.queues()].some((q) => q.active > 0);
    }
}
//# sourceMappingURL=endpoints.js.map