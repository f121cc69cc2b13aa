/**
 * Names shared by the gateway and the engine: streams, subjects, KV buckets, headers and Redis keys.
 * Nothing else spells them out.
 */
export const STREAM_OUTBOUND = 'OB_OUTBOUND'
export const STREAM_EVENTS = 'OB_EVENTS'

export const OUTBOUND_SUBJECTS = 'ob.out.>'
export const EVENT_SUBJECTS = 'ob.evt.>'

/** Inbound mail: the raw message lives in an object store bucket, a small job on a work-queue stream points at it. */
export const STREAM_INBOUND = 'OB_INBOUND'
export const INBOUND_SUBJECTS = 'ob.in.>'
export const OBJ_INBOUND_RAW = 'ob_inbound_raw'
/**
 * Object metadata naming the organisations that may read a kept message (GET /v1/inbound/{id}/raw), comma-separated:
 * those whose `inbound.received` event left part of it out. A message without it is not readable through the API.
 */
export const INBOUND_RAW_READERS = 'ob-readers'

export function inboundRawReaders (metadata: Readonly<Record<string, string>> | undefined): string[] {
  const v = metadata?.[INBOUND_RAW_READERS]
  return v === undefined || v === '' ? [] : v.split(',')
}
export const CONSUMER_INBOUND = 'inbound'

export function inboundSubject (shard: number): string {
  return `ob.in.${shard}`
}

/** Outbound work for one shard; the shard is the unit an engine owns. */
export function outboundSubject (shard: number): string {
  return `ob.out.${shard}`
}

/** Durable consumer of one outbound shard. */
export function outboundConsumer (shard: number): string {
  return `ob_shard_${shard}`
}

/** Durable consumer on OB_EVENTS that feeds the read model; deleting it makes the next start replay the whole stream. */
export const CONSUMER_PROJECTOR = 'ob_projector'

export function eventSubject (orgId: string, type: string): string {
  return `ob.evt.${orgId}.${type}`
}

export const KV_BUCKETS = {
  orgs: 'ob_orgs',
  domains: 'ob_domains',
  domainNames: 'ob_domain_names',
  apiKeys: 'ob_api_keys',
  webhooks: 'ob_webhooks',
  templates: 'ob_templates',
  routes: 'ob_routes',
  suppressions: 'ob_suppressions',
  settings: 'ob_settings',
  /** Return-path (VERP) keys: `<key_id>` → `{id, secret, created_at}` (stores/control_plane/verp_keys.ts). */
  verpKeys: 'ob_verp_keys',
  /** Operator keys: `<key_id>` → OperatorKeyRecord (stores/control_plane/operator_keys.ts); only their SHA-256 is kept. */
  operatorKeys: 'ob_operator_keys',
  /**
   * The operator's egress configuration (stores/control_plane/egress_config.ts): `source.<name>`, `pool.<name>` and
   * `settings` (protocol/egress/records.ts); and the holds and orders on waiting mail, `queue.hold.<digest>` and
   * `queue.order.<id>` (stores/control_plane/queue_holds.ts, protocol/queues.ts).
   */
  egress: 'ob_egress',
  /** Broadcast message streams: `<org_id>.<stream_id>` → StreamRecord (stores/control_plane/message_streams.ts). */
  streams: 'ob_streams'
} as const

/**
 * Shard leases and engine presence (engine/leases/); not mirrored by the control plane.
 * Keys: `<group>.shard.<n>` → `{owner, expires_at}`, `<group>.member.<engine id>` → `{owner, expires_at}`.
 */
export const KV_SHARD_LEASES = 'ob_shard_leases'

/**
 * Cancels and reschedules of scheduled messages, kept where losing Redis cannot undo them (stores/schedule/).
 * Keys: `<msg_id>` → `canceled` or `at:<epoch ms>`; the bucket's max age outlives the furthest schedule.
 */
export const KV_SCHEDULE_DECISIONS = 'ob_schedule_decisions'

/**
 * Finished Idempotency-Key requests, kept 24 h where losing Redis cannot undo them (gateway/idempotency/).
 * Keys: `<org_id>.<SHA-256 of the Idempotency-Key>` → the Redis record of the finished request.
 */
export const KV_IDEMPOTENCY = 'ob_idempotency'

export const HDR_MSG_ID = 'Nats-Msg-Id'

export const REDIS_KEYS = {
  /** GCRA state for one API key; the limit is part of the key so a plan change starts a fresh bucket. */
  rateLimit: (keyId: string, perMinute: number) => `ob:rl:${keyId}:${perMinute}:60`,
  /** Failed authentications from one client address; the limit a minute is part of the key, as above. */
  authFailuresByAddress: (address: string, perMinute: number) => `ob:authfail:${address}:${perMinute}:60`,
  /** Failed authentications presenting one key prefix (`ob_live_` + 4 characters, what the key list shows). */
  authFailuresByPrefix: (prefix: string, perMinute: number) => `ob:authfail-prefix:${prefix}:${perMinute}:60`,
  /** GCRA state for the public tracking endpoints, per client address. */
  trackingRate: (ip: string, perMinute: number) => `ob:trl:${ip}:${perMinute}:60`,
  idempotency: (orgId: string, key: string) => `ob:idem:${orgId}:${key}`,
  /** Written (a few bytes, expiring) by the Redis health probe: only a write tells whether Redis has room. */
  healthProbe: 'ob:health:probe'
} as const

/** Stable shard for a message: FNV-1a over the id, so every gateway agrees without coordination. */
export function shardOf (id: string, shards: number): number {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0) % shards
}

/** Webhook delivery jobs: one message per (event, webhook, attempt), in the shard that owns the webhook. */
export const STREAM_WEBHOOK_JOBS = 'OB_WEBHOOK_JOBS'
export const WEBHOOK_JOB_SUBJECTS = 'ob.whjob.>'
/** Durable consumer on OB_EVENTS that turns events into delivery jobs. */
export const CONSUMER_WEBHOOK_FANOUT = 'ob_webhooks'

export function webhookJobSubject (shard: number, webhookId: string): string {
  return `ob.whjob.${shard}.${webhookId}`
}

export function webhookJobShardFilter (shard: number): string {
  return `ob.whjob.${shard}.>`
}

export function webhookJobConsumer (shard: number): string {
  return `ob_whjob_${shard}`
}

export const HDR_SIGNATURE = 'X-Service-Signature'
/** Standard Webhooks (standardwebhooks.com) headers, sent alongside X-Service-Signature. */
export const HDR_WEBHOOK_ID = 'webhook-id'
export const HDR_WEBHOOK_TIMESTAMP = 'webhook-timestamp'
export const HDR_WEBHOOK_SIGNATURE = 'webhook-signature'

/**
 * A message's delivery state, the Redis hash `ob:done:<msg_id>` (layout and sole writer: engine/delivery_state_layout.ts);
 * named here so an erase can delete it without knowing the layout.
 */
export function deliveryStateKey (messageId: string): string {
  return `ob:done:${messageId}`
}

/** Delivery attempts of one webhook, newest first (a capped Redis list). */
export function webhookDeliveryLogKey (webhookId: string): string {
  return `ob:whd:${webhookId}`
}

/**
 * Ids of the events one webhook received with a 2xx, per UTC day of the event's timestamp (`yyyymmdd`): a Redis
 * set kept as long as events are, which tells a recover what the webhook did not receive.
 */
export function webhookReceivedKey (webhookId: string, day: string): string {
  return `ob:whok:${webhookId}:${day}`
}

/** Ids of the events a recover queued for one webhook lately: a second recover does not queue them again. */
export function webhookRecoveringKey (webhookId: string): string {
  return `ob:whrec:${webhookId}`
}

/** Content of queued messages too large for their stream message; one object per message, named by its id. */
export const OBJ_OUTBOUND_CONTENT = 'ob_outbound_content'

/**
 * What each message looked like as it was rendered for sending (subject, html, text, headers, attachment names),
 * for GET /v1/messages/{id}/content; kept as long as the message record. Layout: stores/message_content.
 */
export const STREAM_MESSAGE_CONTENT = 'OB_MESSAGE_CONTENT'
export const MESSAGE_CONTENT_SUBJECTS = 'ob.content.>'

/** The recorded content of one message (its first part, or all of it); `part` ≥ 1 names a further part. */
export function messageContentSubject (id: string, part = 0): string {
  return part === 0 ? `ob.content.${id}` : `ob.content.${id}.${part}`
}

/**
 * The audit log: one entry per change to an organisation's configuration, on the organisation's own subject, or
 * on `ob.audit.operator` for an operator change that concerns no one organisation. Layout: stores/audit.
 */
export const STREAM_AUDIT = 'OB_AUDIT'
export const AUDIT_SUBJECTS = 'ob.audit.>'
/** The scope of operator changes that concern no organisation (egress sources, pools, limits). */
export const AUDIT_OPERATOR_SCOPE = 'operator'

/** The subject of one scope's entries: an organisation id, or AUDIT_OPERATOR_SCOPE. */
export function auditSubject (scope: string): string {
  return `ob.audit.${scope}`
}
