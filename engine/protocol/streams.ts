import { jetstreamManager, RetentionPolicy, StorageType, DiscardPolicy, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { STREAM_OUTBOUND, OUTBOUND_SUBJECTS, STREAM_EVENTS, EVENT_SUBJECTS } from './subjects.ts'

const NS_PER_MS = 1_000_000
/** Re-publishes of the same message id within this window are dropped by JetStream (gateway publish retries). */
export const OUTBOUND_DUPLICATE_WINDOW_MS = 10 * 60_000 // 10 min
export const EVENTS_MAX_AGE_MS = 30 * 24 * 3600_000 // 30 days of events for the read API and webhook replays

/** Stream settings, stated in one place and documented in docs/operations.md. */
export function streamConfigs (replicas: number): Array<Partial<StreamConfig> & { name: string, subjects: string[] }> {
  return [
    {
      name: STREAM_OUTBOUND,
      subjects: [OUTBOUND_SUBJECTS],
      // Work queue: a message leaves the stream when the engine acknowledges its final outcome.
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: replicas,
      duplicate_window: OUTBOUND_DUPLICATE_WINDOW_MS * NS_PER_MS,
      discard: DiscardPolicy.Old,
      max_msg_size: 12 * 1024 * 1024
    },
    {
      name: STREAM_EVENTS,
      subjects: [EVENT_SUBJECTS],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      num_replicas: replicas,
      duplicate_window: 2 * 60_000 * NS_PER_MS,
      max_age: EVENTS_MAX_AGE_MS * NS_PER_MS,
      discard: DiscardPolicy.Old
    }
  ]
}

/** Creates a stream, or brings an existing one to `cfg`; safe to run from every process at every start. */
export async function ensureStream (jsm: JetStreamManager, cfg: Partial<StreamConfig> & { name: string }): Promise<void> {
  try {
    await jsm.streams.info(cfg.name)
    await jsm.streams.update(cfg.name, cfg)
  } catch (err) {
    if ((err as { name?: string }).name !== 'StreamNotFoundError' && !/not found/i.test(String((err as Error).message))) throw err
    await jsm.streams.add(cfg)
  }
}

/** The outbound and event streams, which every role needs. */
export async function ensureStreams (nc: NatsConnection, replicas: number): Promise<void> {
  const jsm = await jetstreamManager(nc)
  for (const cfg of streamConfigs(replicas)) await ensureStream(jsm, cfg)
}
