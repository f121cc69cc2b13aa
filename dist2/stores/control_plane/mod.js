/** Tenants, keys, templates, webhooks, suppressions and return-path keys in NATS KV, mirrored in memory. */
export { KvMirror, KvConflictError } from './kv_mirror.js';
export { ControlPlane, suppressionKey } from './control_plane.js';
export { VerpKeyRing, VerpKeyError } from './verp_keys.js';
//# sourceMappingURL=mod.js.map