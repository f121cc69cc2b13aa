/**
 * Tenants, keys, templates, webhooks, suppressions, return-path keys, operator keys and the egress configuration in NATS
 * KV, mirrored in memory.
 */
export { KvMirror, KvConflictError } from './kv_mirror.ts'
export { ControlPlane, suppressionKey } from './control_plane.ts'
export { VerpKeyRing, VerpKeyError, type VerpKeyRecord } from './verp_keys.ts'
export { OperatorKeys, OPERATOR_KEY_PREFIX, OPERATOR_KEY_SHAPE, operatorKeyView, type OperatorKeyView } from './operator_keys.ts'
export { EgressConfig, type EgressEntry } from './egress_config.ts'
export { Organizations, MAX_RATE_LIMIT_PER_MINUTE, planLimit, planRank, type PlanInput, type Retention } from './organizations.ts'
export { QueueControls } from './queue_holds.ts'
export { SuppressionList, type SuppressionDetails } from './suppression_list.ts'
export { SuppressionIndex, entryKey, type SuppressionFilter, type SuppressionReason as SuppressionListReason } from './suppression_index.ts'
export { StreamPauses } from './stream_pauses.ts'
export { MessageStreams, type StreamFields } from './message_streams.ts'
