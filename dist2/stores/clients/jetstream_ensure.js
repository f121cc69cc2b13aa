import { DiscardPolicy, jetstreamManager } from '@nats-io/jetstream';
import { streamTable, tablePart } from '../../protocol/mod.js';
import { isConsumerNotFound, isStorageNotReservable, isStreamNotFound } from './nats_errors.js';
/** The NATS server cannot reserve a stream's share of OB_NATS_STORE_MB: its `max_file_store` is smaller. */
export class StoreReservationError extends Error {
    code = 'store_reservation';
    constructor(stream, maxBytes, options) {
        super(`the NATS server cannot reserve ${maxBytes} bytes for ${stream}: OB_NATS_STORE_MB is larger than the JetStream ` +
            'store it allows (max_file_store, less what other streams reserve); lower OB_NATS_STORE_MB or raise max_file_store', options);
        this.name = 'StoreReservationError';
    }
}
/**
 * Creates every stream, then every consumer, of `table` that is missing, and brings those that exist to the
 * table's settings; safe to run from every process at every start. Two processes racing to create the same
 * entry both succeed: the server accepts an identical create.
 */
export async function ensureJetStream(io, table) {
    const jsm = 'streams' in io ? io : await jetstreamManager(io);
    for (const s of table.streams)
        await ensureStream(jsm, s);
    for (const c of table.consumers)
        await ensureConsumer(jsm, c);
}
async function ensureStream(jsm, { config }) {
    const info = await found(jsm.streams.info(config.name), isStreamNotFound);
    await reserving(config.name, config.max_bytes, async () => {
        if (info === undefined)
            await jsm.streams.add(config);
        else
            await jsm.streams.update(config.name, { ...config, max_bytes: keptMaxBytes(info, config.max_bytes, config.discard) });
    });
}
/**
 * The `max_bytes` to give an existing stream: nats-server deletes a stream's oldest messages at once when its
 * `max_bytes` is lowered below what it holds, whatever its discard policy, so a stream of owed work (`discard:
 * new`) keeps at least what it holds (a smaller OB_NATS_STORE_MB takes effect as it drains, at a later start).
 */
function keptMaxBytes(info, wanted, discard) {
    if (wanted === undefined || wanted <= 0 || discard !== DiscardPolicy.New)
        return wanted;
    return Math.max(wanted, info.state.bytes);
}
async function reserving(stream, maxBytes, write) {
    try {
        await write();
    }
    catch (err) {
        if (isStorageNotReservable(err))
            throw new StoreReservationError(stream, maxBytes ?? 0, { cause: err });
        throw err;
    }
}
/**
 * Brings a bucket's stream (`KV_<bucket>`, `OBJ_<bucket>`, which the client creates `discard: new`) to its share
 * of the store; the client libraries create a missing bucket with it but leave an existing one as it is.
 */
export async function ensureStoreShare(jsm, stream, maxBytes) {
    const info = await jsm.streams.info(stream);
    const target = keptMaxBytes(info, maxBytes, DiscardPolicy.New);
    if (info.config.max_bytes === target)
        return;
    await reserving(stream, target, async () => { await jsm.streams.update(stream, { ...info.config, max_bytes: target }); });
}
async function ensureConsumer(jsm, { stream, config }) {
    if (!(await exists(jsm.consumers.info(stream, config.durable_name), isConsumerNotFound))) {
        await jsm.consumers.add(stream, config);
        return;
    }
    // The server keeps these as the consumer was created; everything else follows the table.
    const { durable_name: _n, ack_policy: _a, deliver_policy: _d, filter_subject: _f, ...mutable } = config;
    await jsm.consumers.update(stream, config.durable_name, mutable);
}
async function exists(info, isNotFound) {
    return (await found(info, isNotFound)) !== undefined;
}
async function found(info, isNotFound) {
    try {
        return await info;
    }
    catch (err) {
        if (isNotFound(err))
            return undefined;
        throw err;
    }
}
/**
 * The streams every role needs (outbound, events, message content); run at every start and by the CLI, with the
 * settings of the configuration (`streamSettings(config)`), so an existing stream takes a changed setting.
 */
export async function ensureStreams(nc, settings) {
    await ensureJetStream(nc, tablePart({ streams: streamTable(settings), consumers: [] }, 'core'));
}
//# sourceMappingURL=jetstream_ensure.js.map