/** Tenants, keys, templates, webhooks, suppressions and return-path keys in NATS KV, mirrored in memory. */
export { KvMirror, KvConflictError } from './kv_mirror.ts'
export { ControlPlane, suppressionKey } from './control_plane.ts'
export { VerpKeyRing, VerpKeyError, type VerpKeyRecord } from './verp_keys.ts'
