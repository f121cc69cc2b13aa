import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { DEFAULT_NATS_STORE_MB } from '../../config/mod.js';
import { ensureStoreShare } from '../clients/mod.js';
import { KV_BUCKETS, kvBucketOptions, kvShareBytes, sha256Hex } from '../../protocol/mod.js';
import { KvMirror } from './kv_mirror.js';
import { VerpKeyRing } from './verp_keys.js';
/**
 * Organisations, domains, keys, webhooks, templates, inbound routes, suppressions and return-path keys, stored in NATS KV
 * (replicated in a cluster) and mirrored in every process. Keys of org-owned records are `<org_id>.<id>`.
 */
/** How many presented key values' digests a process remembers. */
const PRESENTED_KEY_HASHES = 10_000;
export class ControlPlane {
    orgs;
    domains;
    domainNames;
    apiKeys;
    webhooks;
    templates;
    routes;
    suppressions;
    settings;
    verpKeyMirror;
    presentedKeyHashes = new Map();
    constructor(orgs, domains, 
    /**
     * domain name → `<org_id>.<domain_id>` of the claim that verified it (or is verifying it right now). Pending
     * claims are not in it: several organisations may claim one name, and the first to verify takes the entry.
     */
    domainNames, apiKeys, webhooks, templates, routes, suppressions, settings, verpKeyMirror) {
        this.orgs = orgs;
        this.domains = domains;
        this.domainNames = domainNames;
        this.apiKeys = apiKeys;
        this.webhooks = webhooks;
        this.templates = templates;
        this.routes = routes;
        this.suppressions = suppressions;
        this.settings = settings;
        this.verpKeyMirror = verpKeyMirror;
        this.verpKeys = new VerpKeyRing(verpKeyMirror);
    }
    /** Return-path (VERP) keys: the newest signs, every listed one verifies. */
    verpKeys;
    /** `storeBytes`: OB_NATS_STORE_MB in bytes, of which each bucket gets its share (protocol/store_budget.ts). */
    static async open(nc, opts) {
        const kvm = new Kvm(nc);
        const jsm = await jetstreamManager(nc);
        const storeBytes = opts.storeBytes ?? DEFAULT_NATS_STORE_MB * 1024 * 1024;
        const bucket = async (name) => {
            const kv = await kvm.create(name, kvBucketOptions(opts.replicas, storeBytes, name));
            await ensureStoreShare(jsm, `KV_${name}`, kvShareBytes(storeBytes, name));
            return kv;
        };
        const [orgs, domains, domainNames, apiKeys, webhooks, templates, routes, suppressions, settings, verpKeys] = await Promise.all([
            bucket(KV_BUCKETS.orgs), bucket(KV_BUCKETS.domains), bucket(KV_BUCKETS.domainNames), bucket(KV_BUCKETS.apiKeys),
            bucket(KV_BUCKETS.webhooks), bucket(KV_BUCKETS.templates), bucket(KV_BUCKETS.routes), bucket(KV_BUCKETS.suppressions),
            bucket(KV_BUCKETS.settings), bucket(KV_BUCKETS.verpKeys)
        ]);
        const mirrors = await Promise.all([
            KvMirror.open(orgs),
            KvMirror.open(domains, { id: (d) => d.id }),
            KvMirror.open(domainNames),
            KvMirror.open(apiKeys, { hash: (k) => k.hash }), // keyed by key id
            KvMirror.open(webhooks, { id: (w) => w.id }, { org: (w) => w.org_id }),
            KvMirror.open(templates, { id: (t) => t.id }),
            KvMirror.open(routes, { id: (r) => r.id }),
            KvMirror.open(suppressions)
        ]);
        const cp = new ControlPlane(...mirrors, settings, await KvMirror.open(verpKeys));
        await cp.verpKeys.ensure();
        return cp;
    }
    /**
     * The key record for a presented key value, or undefined: a map look-up by the value's SHA-256. The digests of
     * recently presented values are remembered in this process only (never stored), since a busy client presents
     * the same key on every request; the record itself is always looked up afresh, so a revocation applies at once.
     */
    keyByValue(value) {
        const known = this.presentedKeyHashes.get(value);
        if (known !== undefined)
            return this.apiKeys.getBy('hash', known);
        const hash = sha256Hex(value);
        const key = this.apiKeys.getBy('hash', hash);
        // Only values that matched a key are remembered, so guessed values cannot crowd out real ones.
        if (key !== undefined) {
            if (this.presentedKeyHashes.size >= PRESENTED_KEY_HASHES)
                this.presentedKeyHashes.clear();
            this.presentedKeyHashes.set(value, hash);
        }
        return key;
    }
    domain(orgId, domainId) {
        return this.domains.get(`${orgId}.${domainId}`);
    }
    /** The verified domain that owns `name`, or undefined while no organisation has verified it. */
    domainOwner(name) {
        const key = this.domainNames.get(name.toLowerCase());
        const domain = key === undefined ? undefined : this.domains.get(key);
        return domain?.status === 'verified' ? domain : undefined;
    }
    isSuppressed(orgId, email) {
        return this.suppressions.get(suppressionKey(orgId, email)) !== undefined;
    }
    close() {
        for (const m of [this.orgs, this.domains, this.domainNames, this.apiKeys, this.webhooks, this.templates, this.routes, this.suppressions, this.verpKeyMirror])
            m.stop();
    }
}
/** Suppression entries are keyed by a hash so any address fits KV's key alphabet. */
export function suppressionKey(orgId, email) {
    return `${orgId}.${sha256Hex(email.trim().toLowerCase()).slice(0, 40)}`;
}
//# sourceMappingURL=control_plane.js.map