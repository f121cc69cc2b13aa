/**
 * The shape of an entry of the JetStream table (jetstream_table.ts) and the settings it is built from, shared by
 * the stream, consumer and bucket definitions.
 */
/** JetStream states durations in nanoseconds. */
export const NS_PER_MS = 1_000_000;
export function streamSettings(config) {
    return { replicas: config.nats.replicas, messageContentRetentionDays: config.messageContent.retentionDays, storeBytes: config.nats.storeBytes };
}
export function jetStreamSettings(config) {
    return { ...streamSettings(config), shards: config.engine.shards, ackWaitMs: config.engine.ackWaitMs, webhookTimeoutMs: config.webhook.timeoutMs };
}
//# sourceMappingURL=jetstream_specs.js.map