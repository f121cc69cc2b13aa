import type { ConsumerConfig, StreamConfig } from '@nats-io/jetstream'
import type { Config } from '../config/mod.ts'

/**
 * The shape of an entry of the JetStream table (jetstream_table.ts) and the settings it is built from, shared by
 * the stream, consumer and bucket definitions.
 */

/** JetStream states durations in nanoseconds. */
export const NS_PER_MS = 1_000_000

/** What the streams depend on: the settings of the configuration that change stream settings. */
export interface StreamSettings {
  /** OB_NATS_REPLICAS */
  replicas: number
  /** OB_MESSAGE_CONTENT_RETENTION_DAYS: days OB_MESSAGE_CONTENT keeps a message's content; 0 records none. */
  messageContentRetentionDays: number
  /** OB_NATS_STORE_MB in bytes: the store divided among the streams and buckets (store_budget.ts). */
  storeBytes: number
  /** OB_AUDIT_RETENTION_DAYS: days OB_AUDIT keeps an entry; DEFAULT_AUDIT_RETENTION_DAYS when not given. */
  auditRetentionDays?: number
}

/** The audit log's retention when the settings name none (the default of OB_AUDIT_RETENTION_DAYS). */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365

/** What the table depends on: the few settings of the configuration that change stream or consumer settings. */
export interface JetStreamSettings extends StreamSettings {
  /** OB_ENGINE_SHARDS: one outbound consumer and one webhook job consumer per shard. */
  shards: number
  /** OB_ENGINE_ACK_WAIT_MS: the outbound consumers' `ack_wait`. */
  ackWaitMs: number
  /** OB_WEBHOOK_TIMEOUT_MS: webhook consumers wait this plus WEBHOOK_ACK_WAIT_SLACK_MS. */
  webhookTimeoutMs: number
}

export function streamSettings (config: Config): StreamSettings {
  return {
    replicas: config.nats.replicas,
    messageContentRetentionDays: config.messageContent.retentionDays,
    storeBytes: config.nats.storeBytes,
    auditRetentionDays: config.audit.retentionDays
  }
}

export function jetStreamSettings (config: Config): JetStreamSettings {
  return {
    ...streamSettings(config), shards: config.engine.shards, ackWaitMs: config.engine.ackWaitMs, webhookTimeoutMs: config.webhook.timeoutMs
  }
}

/**
 * Which part of a process ensures an entry: `core` at every start of every role (and by the CLI), the others
 * by the part of the engine or inbound role that uses them.
 */
export type JetStreamPart = 'core' | 'delivery' | 'projector' | 'webhooks' | 'inbound'

export interface StreamSpec {
  part: JetStreamPart
  /** What the entry is for, as docs/operations.md says it. */
  purpose: string
  config: Partial<StreamConfig> & { name: string, subjects: string[] }
}

export interface ConsumerSpec {
  part: JetStreamPart
  purpose: string
  stream: string
  config: Partial<ConsumerConfig> & { durable_name: string }
}
