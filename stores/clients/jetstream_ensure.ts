import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { streamTable, tablePart, type ConsumerSpec, type JetStreamTable, type StreamSettings, type StreamSpec } from '../../protocol/mod.ts'
import { isConsumerNotFound, isStreamNotFound } from './nats_errors.ts'

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
  if (await exists(jsm.streams.info(config.name), isStreamNotFound)) await jsm.streams.update(config.name, config)
  else await jsm.streams.add(config)
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
  try {
    await info
    return true
  } catch (err) {
    if (isNotFound(err)) return false
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
