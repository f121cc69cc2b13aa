import { DiscardPolicy, jetstreamManager, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import {
  streamTable, tablePart, type ConsumerSpec, type InternalErrorCode, type JetStreamTable, type StreamSettings, type StreamSpec
} from '../../protocol/mod.ts'
import { isConsumerNotFound, isStorageNotReservable, isStreamNotFound } from './nats_errors.ts'

/** The NATS server cannot reserve a stream's share of OB_NATS_STORE_MB: its `max_file_store` is smaller. */
export class StoreReservationError extends Error {
  readonly code = 'store_reservation' satisfies InternalErrorCode
  constructor (stream: string, maxBytes: number, options: ErrorOptions) {
    super(`the NATS server cannot reserve ${maxBytes} bytes for ${stream}: OB_NATS_STORE_MB is larger than the JetStream ` +
      'store it allows (max_file_store, less what other streams reserve); lower OB_NATS_STORE_MB or raise max_file_store', options)
    this.name = 'StoreReservationError'
  }
}

/**
 * Creates every stream, then every consumer, of `table` that is missing, and brings those that exist to the
 * table's settings; safe to run from every process at every start. Two processes racing to create the same
 * entry both succeed: the server accepts an identical create.
 */
export async function ensureJetStream (io: NatsConnection | JetStreamManager, table: JetStreamTable): Promise<void> {
  const jsm = 'streams' in io ? io : await jetstreamManager(io)
  for (const s of table.streams) await ensureStream(jsm, s)
  for (const c of table.consumers) await ensureConsumer(jsm, c)
}

async function ensureStream (jsm: JetStreamManager, { config }: StreamSpec): Promise<void> {
  const info = await found(jsm.streams.info(config.name), isStreamNotFound)
  await reserving(config.name, config.max_bytes, async () => {
    if (info === undefined) await jsm.streams.add(config)
    else await jsm.streams.update(config.name, { ...config, max_bytes: keptMaxBytes(info, config.max_bytes, config.discard) })
  })
}

/**
 * The `max_bytes` to give an existing stream: nats-server deletes a stream's oldest messages at once when its
 * `max_bytes` is lowered below what it holds, whatever its discard policy, so a stream of owed work (`discard:
 * new`) keeps at least what it holds (a smaller OB_NATS_STORE_MB takes effect as it drains, at a later start).
 */
function keptMaxBytes (info: StreamInfo, wanted: number | undefined, discard: DiscardPolicy | undefined): number | undefined {
  if (wanted === undefined || wanted <= 0 || discard !== DiscardPolicy.New) return wanted
  return Math.max(wanted, info.state.bytes)
}

async function reserving (stream: string, maxBytes: number | undefined, write: () => Promise<void>): Promise<void> {
  try {
    await write()
  } catch (err) {
    if (isStorageNotReservable(err)) throw new StoreReservationError(stream, maxBytes ?? 0, { cause: err })
    throw err
  }
}

/**
 * Brings a bucket's stream (`KV_<bucket>`, `OBJ_<bucket>`, which the client creates `discard: new`) to its share
 * of the store; the client libraries create a missing bucket with it but leave an existing one as it is.
 */
export async function ensureStoreShare (jsm: JetStreamManager, stream: string, maxBytes: number): Promise<void> {
  const info = await jsm.streams.info(stream)
  const target = keptMaxBytes(info, maxBytes, DiscardPolicy.New)!
  if (info.config.max_bytes === target) return
  await reserving(stream, target, async () => { await jsm.streams.update(stream, { ...info.config, max_bytes: target }) })
}

async function ensureConsumer (jsm: JetStreamManager, { stream, config }: ConsumerSpec): Promise<void> {
  if (!(await exists(jsm.consumers.info(stream, config.durable_name), isConsumerNotFound))) {
    await jsm.consumers.add(stream, config)
    return
  }
  // The server keeps these as the consumer was created; everything else follows the table.
  const { durable_name: _n, ack_policy: _a, deliver_policy: _d, filter_subject: _f, ...mutable } = config
  await jsm.consumers.update(stream, config.durable_name, mutable)
}

async function exists (info: Promise<unknown>, isNotFound: (err: unknown) => boolean): Promise<boolean> {
  return (await found(info, isNotFound)) !== undefined
}

async function found<T> (info: Promise<T>, isNotFound: (err: unknown) => boolean): Promise<T | undefined> {
  try {
    return await info
  } catch (err) {
    if (isNotFound(err)) return undefined
    throw err
  }
}

/**
 * The streams every role needs (outbound, events, message content); run at every start and by the CLI, with the
 * settings of the configuration (`streamSettings(config)`), so an existing stream takes a changed setting.
 */
export async function ensureStreams (nc: NatsConnection, settings: StreamSettings): Promise<void> {
  await ensureJetStream(nc, tablePart({ streams: streamTable(settings), consumers: [] }, 'core'))
}
