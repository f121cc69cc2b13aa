import { ApiError, outboundSubject, shardOf } from '../../protocol/mod.js';
import { JsPublisher, PayloadTooLargeError, PublishRejectedError, PublishTimeoutError, isJetStreamFull } from '../../stores/clients/mod.js';
import { idempotent } from '../idempotency/mod.js';
import { ReadModelWriter } from './read_model_writer.js';
import { LargeContent, queueFullError } from './large_content.js';
import { sendRoomWatches } from '../health/queue_room.js';
import { Problems, isPrepared, prepareMessage } from './prepare.js';
/** Maps the typed errors of the publish boundary to the documented API errors. */
function toApiError(err) {
    if (err instanceof ApiError)
        return err;
    if (err instanceof PayloadTooLargeError)
        return new ApiError('payload_too_large', `The message is ${err.size} bytes encoded; the message store accepts at most ${err.limit}.`, { cause: err });
    if (err instanceof PublishRejectedError && isJetStreamFull(err))
        return queueFullError(err);
    if (err instanceof PublishTimeoutError || err instanceof PublishRejectedError)
        return new ApiError('service_unavailable', 'The message store did not confirm the message in time; retry shortly with the same Idempotency-Key.', { cause: err, retryAfter: 1 });
    return ApiError.from(err);
}
/**
 * Under an Idempotency-Key, the handlers' failures are answered as the documented API errors: a failed publish
 * (`service_unavailable`, `queue_full`) keeps the message ids for the retry, any other failure frees the key.
 */
const PUBLISH_ERRORS = { toError: toApiError };
function result(p) {
    const r = { id: p.msg.id, status: p.status, created_at: p.msg.created_at };
    if (p.msg.suppressed.length > 0)
        r.suppressed = p.msg.suppressed;
    return r;
}
/**
 * The durable send path: prepare → publish to JetStream (202 only after the PubAck), with the optional
 * Idempotency-Key around it; the read-model record follows the reply, batched (ReadModelWriter). One instance per gateway, made and closed by main.ts.
 */
export class SendService {
    deps;
    publisher;
    readModel;
    large;
    /** Sends stop at the queue's admission limit, below its `max_bytes` (protocol/store_budget.ts says why). */
    room;
    constructor(deps) {
        this.deps = deps;
        this.publisher = new JsPublisher(deps.nc, deps.config.nats.publishTimeoutMs);
        this.readModel = new ReadModelWriter(deps.messages, deps.log);
        this.large = new LargeContent(deps.nc, deps.config);
        this.room = sendRoomWatches(deps.nc);
        void this.room.queue.start();
        void this.room.content.start();
    }
    /**
     * Fails the publishes still waiting for their PubAck and drops the publisher's reply subscription; read-model
     * writes still gathered leave at once.
     */
    close() {
        this.room.queue.stop();
        this.room.content.stop();
        this.publisher.close();
        this.readModel.flush();
    }
    async send(ctx, path) {
        return await idempotent(ctx, path, async ({ previous, retry }) => {
            const now = Date.now();
            const createdAt = previous?.created_at ?? new Date(now).toISOString();
            const problems = new Problems();
            const p = prepareMessage(ctx.body, ctx.auth, this.deps.cp, now, createdAt, '', problems, previous?.ids[0]);
            problems.throwIfAny();
            if (!isPrepared(p)) {
                throw new ApiError('recipient_suppressed', undefined, { details: { suppressed: p.suppressed } });
            }
            const data = this.encode(p.msg);
            retry.ids = [p.msg.id];
            retry.created_at = createdAt;
            await this.publish(p.msg, data);
            this.record(p);
            return { status: 202, body: result(p) };
        }, PUBLISH_ERRORS);
    }
    async batch(ctx, path) {
        return await idempotent(ctx, path, async ({ previous, retry }) => {
            const now = Date.now();
            const createdAt = previous?.created_at ?? new Date(now).toISOString();
            const problems = new Problems();
            const items = ctx.body.messages.map((m, i) => prepareMessage(m, ctx.auth, this.deps.cp, now, createdAt, `messages[${i}].`, problems, previous?.ids[i]));
            problems.throwIfAny();
            if (!items.some(isPrepared)) {
                throw new ApiError('recipient_suppressed', 'Every recipient of every message is on the suppression list.', { details: { suppressed: items.flatMap((p) => p.suppressed) } });
            }
            // Every size is checked before anything is published, so a 413 leaves nothing half sent.
            const encoded = items.map((p) => isPrepared(p) ? this.encode(p.msg) : undefined);
            retry.ids = items.map((p) => isPrepared(p) ? p.msg.id : null);
            retry.created_at = createdAt;
            const confirmedBefore = new Set(previous?.accepted ?? []);
            // Messages a failed attempt already got confirmed are not published again.
            const settled = await Promise.allSettled(items.map(async (p, index) => {
                if (isPrepared(p) && !confirmedBefore.has(index))
                    await this.publish(p.msg, encoded[index]);
            }));
            const failed = [];
            settled.forEach((s, index) => {
                if (s.status === 'rejected')
                    failed.push(index);
                else if (isPrepared(items[index]))
                    retry.accepted.push(index);
            });
            if (failed.length > 0) {
                const accepted = retry.accepted.map((index) => ({ index, id: items[index].msg.id }));
                for (const { index } of accepted)
                    if (!confirmedBefore.has(index))
                        this.record(items[index]);
                const cause = settled[failed[0]].reason;
                const err = toApiError(cause);
                const total = items.filter(isPrepared).length;
                throw new ApiError(err.code, `${accepted.length} of ${total} messages were queued; the others were not (see details.failed).`, {
                    cause, details: { accepted, failed }, ...(err.retryAfter !== undefined ? { retryAfter: err.retryAfter } : {})
                });
            }
            const data = items.map((p) => isPrepared(p) ? result(p) : { id: null, status: 'suppressed', suppressed: p.suppressed });
            const fresh = items.filter((p, index) => isPrepared(p) && !confirmedBefore.has(index));
            for (const p of fresh)
                this.record(p);
            return { status: 202, body: { data } };
        }, PUBLISH_ERRORS);
    }
    /**
     * Publishes one message prepared elsewhere (SMTP submission) and records it: resolves once JetStream has it.
     * Throws the API errors of the HTTP send: `payload_too_large`, `queue_full`, `service_unavailable`.
     */
    async enqueue(p) {
        await this.publish(p.msg, this.encode(p.msg));
        this.record(p);
    }
    /** The message as published (a large one's content apart, see LargeContent); 413 when the NATS server would refuse its size. */
    encode(msg) {
        const encoded = this.large.encode(msg);
        try {
            this.publisher.checkSize(encoded.data);
        }
        catch (err) {
            throw toApiError(err);
        }
        return encoded;
    }
    async publish(msg, encoded) {
        const contentBytes = encoded.content?.length ?? 0;
        if (!this.room.queue.hasRoomFor(encoded.data.length) || !this.room.content.hasRoomFor(contentBytes)) {
            throw queueFullError(new Error('the outbound queue is at its admission limit'));
        }
        if (encoded.content !== undefined)
            await this.large.put(msg.id, encoded.content);
        try {
            await this.publisher.publish(outboundSubject(shardOf(msg.id, this.deps.config.engine.shards)), encoded.data, { msgID: msg.id });
        }
        catch (err) {
            throw toApiError(err);
        }
        this.room.queue.noteWritten(encoded.data.length);
        this.room.content.noteWritten(contentBytes);
        this.deps.metrics.messagesQueued.inc();
    }
    /**
     * Hands the accepted message to the read-model writer; the reply does not wait for it. The message becomes
     * readable within milliseconds, well inside the documented second (read-after-write).
     */
    record(p) {
        this.readModel.add(p.msg, p.status);
    }
}
//# sourceMappingURL=service.js.map