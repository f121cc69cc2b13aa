import { isWrongLastSequence } from '../clients/mod.js';
const enc = new TextEncoder();
const noop = () => { };
const dec = new TextDecoder();
export class KvConflictError extends Error {
    key;
    code = 'kv_conflict';
    constructor(key, opts) {
        super(`key ${key} already exists or changed`, opts);
        this.key = key;
        this.name = 'KvConflictError';
    }
}
/** How long a write waits for this mirror to see it before returning anyway (KV already holds it). */
const WRITE_CATCH_UP_MS = 2000;
/**
 * Reads of the bucket's last revision (`sync`) start at least this far apart: a stream-info request costs
 * about 0.15 ms of CPU in the caller and 0.26 ms of round trip on one host, so back to back under a stream of
 * events they would take half a core; spaced, at most 200 a second, for at most 5 ms more wait per caller.
 */
const SYNC_READ_SPACING_MS = 5;
/**
 * A NATS KV bucket kept in memory by a watch, so reads cost no round trip. Writes go to KV and return once
 * this mirror has seen them, which gives a process read-your-writes; other processes see them within the
 * watch latency (milliseconds on one box).
 */
export class KvMirror {
    kv;
    indexFns;
    groupFns;
    entries = new Map();
    indexes = new Map();
    /** group name → group value → keys of the entries in that group, kept by the watch like the entries. */
    groups = new Map();
    waiters = [];
    changeListeners = new Set();
    seen = 0;
    watcher;
    /** The last read of the bucket's last revision, when it started, and the read callers now wait for. */
    revisionRead;
    revisionReadAt = 0;
    nextRevisionRead;
    constructor(kv, indexFns, groupFns) {
        this.kv = kv;
        this.indexFns = indexFns;
        this.groupFns = groupFns;
    }
    /**
     * Opens the mirror and resolves once every existing entry has been loaded. `indexFns` are unique secondary
     * keys (`getBy`); `groupFns` put entries in groups that share a value (`allBy`).
     */
    static async open(kv, indexFns = {}, groupFns = {}) {
        const mirror = new KvMirror(kv, indexFns, groupFns);
        for (const name of Object.keys(indexFns))
            mirror.indexes.set(name, new Map());
        for (const name of Object.keys(groupFns))
            mirror.groups.set(name, new Map());
        await mirror.start();
        return mirror;
    }
    async start() {
        const status = await this.kv.status();
        let markLoaded;
        const loaded = new Promise((resolve) => { markLoaded = resolve; });
        if (status.values === 0)
            markLoaded();
        this.watcher = await this.kv.watch();
        void (async () => {
            for await (const e of this.watcher) {
                this.apply(e);
                this.advance(e.revision);
                if (e.delta === 0)
                    markLoaded();
            }
        })();
        await loaded;
        // The initial load holds the last value of every key as of a revision at least this one, even when the
        // bucket's newest revision itself is no longer stored (so `sync` never waits for a revision it cannot see).
        this.advance(status.streamInfo.state.last_seq);
    }
    apply(e) {
        const old = this.entries.get(e.key);
        if (old !== undefined) {
            for (const [name, fn] of Object.entries(this.indexFns)) {
                const ix = fn(old.value);
                if (ix !== undefined)
                    this.indexes.get(name).delete(ix);
            }
            for (const [name, fn] of Object.entries(this.groupFns)) {
                const g = fn(old.value);
                const keys = g === undefined ? undefined : this.groups.get(name).get(g);
                keys?.delete(e.key);
                if (keys?.size === 0)
                    this.groups.get(name).delete(g);
            }
        }
        if (e.operation === 'PUT') {
            const value = JSON.parse(dec.decode(e.value));
            this.entries.set(e.key, { value, revision: e.revision });
            for (const [name, fn] of Object.entries(this.indexFns)) {
                const ix = fn(value);
                if (ix !== undefined)
                    this.indexes.get(name).set(ix, e.key);
            }
            for (const [name, fn] of Object.entries(this.groupFns)) {
                const g = fn(value);
                if (g === undefined)
                    continue;
                const byValue = this.groups.get(name);
                let keys = byValue.get(g);
                if (keys === undefined)
                    byValue.set(g, keys = new Set());
                keys.add(e.key);
            }
        }
        else {
            this.entries.delete(e.key);
        }
        if (this.changeListeners.size > 0) {
            const now = this.entries.get(e.key)?.value;
            for (const fn of this.changeListeners)
                fn(e.key, now);
        }
    }
    /**
     * Calls `fn` with every change the watch applies from now on (the new value, or undefined once deleted), right
     * after the mirror holds it: for reacting to a change at once instead of at the next read. Returns the unsubscribe.
     */
    onChange(fn) {
        this.changeListeners.add(fn);
        return () => { this.changeListeners.delete(fn); };
    }
    /** The watch has applied every revision up to `revision` (only the watch moves this: `sync` relies on it). */
    advance(revision) {
        if (revision <= this.seen)
            return;
        this.seen = revision;
        for (let i = this.waiters.length - 1; i >= 0; i--) {
            const w = this.waiters[i];
            if (w.revision <= this.seen) {
                this.waiters.splice(i, 1);
                w.resolve(true);
            }
        }
    }
    /** Resolves true once the watch has applied `revision`, or false after `timeoutMs`. */
    async caughtUp(revision, timeoutMs = WRITE_CATCH_UP_MS) {
        if (revision <= this.seen)
            return true;
        return await new Promise((resolve) => {
            const timer = setTimeout(() => {
                const i = this.waiters.indexOf(waiter);
                if (i >= 0)
                    this.waiters.splice(i, 1);
                resolve(false);
            }, timeoutMs);
            timer.unref();
            const waiter = { revision, resolve: (ok) => { clearTimeout(timer); resolve(ok); } };
            this.waiters.push(waiter);
        });
    }
    /**
     * Resolves true once this mirror holds every change the bucket had stored when `sync` was called (false if
     * the watch has not caught up within `timeoutMs`): a reader that must not act on a view older than the
     * moment it was asked (the webhook fan-out, for an event published after a webhook changed) awaits this
     * first. Costs one stream-info request, shared by every caller waiting at the same time.
     */
    async sync(timeoutMs) {
        return await this.caughtUp(await this.lastRevision(), timeoutMs);
    }
    /**
     * The bucket's last revision, read after this call began. A read in flight may have been answered before the
     * caller's reason to ask (it started earlier), so callers share the next read, which starts once the one in
     * flight is answered and at least SYNC_READ_SPACING_MS after it started: one request at a time, however many
     * callers.
     */
    async lastRevision() {
        this.nextRevisionRead ??= this.readLastRevision();
        return await this.nextRevisionRead;
    }
    async readLastRevision() {
        await this.revisionRead?.then(noop, noop);
        const wait = this.revisionReadAt + SYNC_READ_SPACING_MS - Date.now();
        if (wait > 0)
            await new Promise((resolve) => setTimeout(resolve, wait));
        // Callers from here on ask after this read may have started: they wait for the next one.
        this.nextRevisionRead = undefined;
        this.revisionReadAt = Date.now();
        const read = this.kv.status().then((s) => s.streamInfo.state.last_seq);
        this.revisionRead = read;
        return await read;
    }
    get(key) {
        return this.entries.get(key)?.value;
    }
    revision(key) {
        return this.entries.get(key)?.revision;
    }
    /** Looks up by a secondary index declared at `open`. */
    getBy(index, value) {
        const key = this.indexes.get(index)?.get(value);
        return key === undefined ? undefined : this.get(key);
    }
    /** Values of every entry whose group `group` (declared at `open`) has the value `value`. */
    allBy(group, value) {
        const out = [];
        for (const key of this.groups.get(group)?.get(value) ?? []) {
            const e = this.entries.get(key);
            if (e !== undefined)
                out.push(e.value);
        }
        return out;
    }
    /** Values whose key starts with `prefix` (e.g. `org_….`), in key order. */
    list(prefix = '') {
        const out = [];
        for (const [k, e] of this.entries)
            if (k.startsWith(prefix))
                out.push([k, e.value]);
        out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
        return out.map((x) => x[1]);
    }
    get size() {
        return this.entries.size;
    }
    async put(key, value) {
        await this.caughtUp(await this.kv.put(key, enc.encode(JSON.stringify(value))));
    }
    /** Creates the key; throws KvConflictError when it already holds a value. */
    async create(key, value) {
        let revision;
        try {
            revision = await this.kv.create(key, enc.encode(JSON.stringify(value)));
        }
        catch (err) {
            throw isWrongLastSequence(err) ? new KvConflictError(key, { cause: err }) : err;
        }
        await this.caughtUp(revision);
    }
    /** Compare-and-set against the revision this mirror last saw. */
    async update(key, value, revision) {
        let next;
        try {
            next = await this.kv.update(key, enc.encode(JSON.stringify(value)), revision);
        }
        catch (err) {
            throw isWrongLastSequence(err) ? new KvConflictError(key, { cause: err }) : err;
        }
        await this.caughtUp(next);
    }
    /** Read-modify-write with retries on concurrent change; `fn` returns the new value or undefined to stop. */
    async modify(key, fn) {
        for (let attempt = 0; attempt < 5; attempt++) {
            const entry = this.entries.get(key);
            if (entry === undefined)
                return undefined;
            const next = fn(entry.value);
            if (next === undefined)
                return entry.value;
            try {
                await this.update(key, next, entry.revision);
                return next;
            }
            catch (err) {
                if (!(err instanceof KvConflictError) || attempt === 4)
                    throw err;
                const fresh = await this.kv.get(key);
                if (fresh !== null)
                    this.apply({ ...fresh, delta: 1 });
            }
        }
        return undefined;
    }
    async delete(key) {
        await this.kv.delete(key);
        const status = await this.kv.status();
        await this.caughtUp(status.streamInfo.state.last_seq);
    }
    stop() {
        this.watcher?.stop();
    }
}
//# sourceMappingURL=kv_mirror.js.map