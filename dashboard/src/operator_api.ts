import type { OutboxClient } from '../../client/src/mod.ts'

/**
 * The operator's egress API as the dashboard reads it (gateway/routes/operator_lanes_v1.ts and operator_egress_v1.ts,
 * records of gateway/schemas/egress.ts). The generated client covers organisation endpoints only, so these calls go
 * through its `request`, which keeps its authentication, retries and error typing.
 */

export interface LaneView {
  lane: string
  /** A source name, or `host` for the host's own address. */
  source: string
  /** A provider id (google, microsoft, …) or `site:<mx host names>`. */
  provider: string
  limits: { maxConnections: number, messagesPerConnection: number, messagesPerMinute: number, tls: string }
  connections: number
  messages_per_minute_now: number
  throttle: { factor: number, paused_until: string | null, out_until: string | null, reason: string | null, changed_at: string | null }
  waiting: { messages: number, oldest_seconds: number | null }
  /** Present while the source warms up. */
  warmup?: { day: number, per_day: number, sent_today: number, per_hour: number, sent_this_hour: number }
}

export interface SourceView {
  name: string
  address: string
  ehlo: string
  warmup?: { started_at: string, steps?: Array<{ day: number, perDay: number, perHour: number }> }
  created_at: string
  updated_at: string
}

export interface PoolView {
  name: string
  sources: Array<{ source: string, weight: number }>
  /** true for `default` while no record exists: no sources, the host's own address. */
  implicit: boolean
  created_at?: string
  updated_at?: string
}

async function list<T> (client: OutboxClient, path: string): Promise<T[]> {
  return (await client.request<{ data: T[] }>({ method: 'GET', path })).data
}

export const egressLanes = async (client: OutboxClient): Promise<LaneView[]> => await list(client, '/v1/operator/egress/lanes')
export const egressSources = async (client: OutboxClient): Promise<SourceView[]> => await list(client, '/v1/operator/egress/sources')
export const egressPools = async (client: OutboxClient): Promise<PoolView[]> => await list(client, '/v1/operator/egress/pools')
