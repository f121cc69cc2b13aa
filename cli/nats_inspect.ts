import { jetstreamManager, type ConsumerInfo, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream'
import { loadConfig } from '../config/mod.ts'
import { connectNats, isStreamNotFound } from '../stores/clients/mod.ts'
import { CliError } from './binaries.ts'
import { NATS_USAGE } from './usage.ts'

type Env = Readonly<Record<string, string | undefined>>

/** Nanoseconds (JetStream's unit of durations) as whole seconds; 0 stays 0 (no limit). */
const seconds = (ns: number): number => Math.round(ns / 1e9)
/** JetStream says -1 for "no limit"; null reads plainer in JSON. */
const limit = (n: number): number | null => (n < 0 ? null : n)

/** What `outbox nats streams` shows of a stream: its contents and the limits that bound them. */
export function streamView (s: StreamInfo): Record<string, unknown> {
  const c = s.config
  return {
    name: c.name,
    subjects: c.subjects ?? [],
    messages: s.state.messages,
    bytes: s.state.bytes,
    first_seq: s.state.first_seq,
    last_seq: s.state.last_seq,
    consumers: s.state.consumer_count,
    limits: {
      retention: c.retention,
      storage: c.storage,
      replicas: c.num_replicas,
      discard: c.discard,
      max_msgs: limit(c.max_msgs),
      max_bytes: limit(c.max_bytes),
      max_age_s: seconds(c.max_age),
      max_msg_size: limit(c.max_msg_size ?? -1),
      max_msgs_per_subject: limit(c.max_msgs_per_subject ?? -1)
    }
  }
}

/** What `outbox nats consumers` shows of a consumer: what waits for it, what it holds, what it had to send again. */
export function consumerView (c: ConsumerInfo): Record<string, unknown> {
  const filters = c.config.filter_subjects ?? (c.config.filter_subject !== undefined ? [c.config.filter_subject] : [])
  return {
    stream: c.stream_name,
    name: c.name,
    pending: c.num_pending,
    ack_pending: c.num_ack_pending,
    redelivered: c.num_redelivered,
    waiting: c.num_waiting,
    delivered_seq: c.delivered.stream_seq,
    ack_floor_seq: c.ack_floor.stream_seq,
    config: {
      filter_subjects: filters,
      ack_policy: c.config.ack_policy,
      ack_wait_s: seconds(c.config.ack_wait ?? 0),
      max_deliver: limit(c.config.max_deliver ?? -1),
      max_ack_pending: limit(c.config.max_ack_pending ?? -1)
    }
  }
}

async function streams (jsm: JetStreamManager): Promise<StreamInfo[]> {
  const out: StreamInfo[] = []
  for await (const s of jsm.streams.list()) out.push(s)
  return out.sort((a, b) => (a.config.name < b.config.name ? -1 : 1))
}

async function consumersOf (jsm: JetStreamManager, stream: string): Promise<ConsumerInfo[]> {
  const out: ConsumerInfo[] = []
  for await (const c of jsm.consumers.list(stream)) out.push(c)
  return out.sort((a, b) => (a.name < b.name ? -1 : 1))
}

/**
 * `outbox nats streams | consumers [stream]`: the JetStream streams (Outbox's, and the key-value and object stores,
 * `KV_…`, `OBJ_…`) and their consumers as the server reports them. Read-only: unlike the other commands it creates
 * nothing, so it can look at a NATS that Outbox has not set up.
 */
export async function runNats (args: string[], env: Env): Promise<unknown> {
  const [what, ...rest] = args
  const usage = (why: string): CliError => new CliError(`outbox: ${why}\n${NATS_USAGE}`, 2)
  if (!((what === 'streams' && rest.length === 0) || (what === 'consumers' && rest.length <= 1))) {
    throw usage(what === undefined ? 'say what to show: streams or consumers' : `unknown arguments "${args.join(' ')}"`)
  }
  const config = loadConfig(env)
  const nc = await connectNats(config.nats.servers, 'outbox-cli').catch(() => {
    throw new CliError(`outbox: no NATS server answers at ${config.nats.servers.join(',')}; start Outbox first (npm start) or set NATS_URL`)
  })
  try {
    const jsm = await jetstreamManager(nc)
    if (what === 'streams') return (await streams(jsm)).map(streamView)
    const names = rest.length === 1 ? [rest[0]!] : (await streams(jsm)).map((s) => s.config.name)
    const out: Array<Record<string, unknown>> = []
    for (const name of names) {
      try {
        for (const c of await consumersOf(jsm, name)) out.push(consumerView(c))
      } catch (err) {
        if (isStreamNotFound(err)) throw new CliError(`outbox: no stream named ${name}`)
        throw err
      }
    }
    return out
  } finally {
    await nc.drain().catch(() => {})
  }
}
