import { PubHeaders } from '@nats-io/jetstream'
import type { Bucket, KV, KvWatchEntry } from '@nats-io/kv'
import { headers as natsHeaders, type QueuedIterator } from '@nats-io/transport-node'
import { isWrongLastSequence, type JsPublish } from '../clients/mod.ts'
import type { InternalErrorCode } from '../../protocol/mod.ts'

const enc = new TextEncoder()
const noop = (): void => {}
const dec = new TextDecoder()

export class KvConflictError extends Error {
  readonly code = 'kv_conflict' satisfies InternalErrorCode
  constructor (readonly key: string, opts?: ErrorOptions) {
    super(`key ${key} already exists or changed`, opts)
    this.name = 'KvConflictError'
  }
}

interface Entry<T> { value: T, revision: number }

/** The headers of a write that JetStream takes only if the key has never held a value (as `kv.create`). */
function expectNewKey (): ReturnType<typeof natsHeaders> {
  const h = natsHeaders()
  h.set(PubHeaders.ExpectedLastSubjectSequenceHdr, '0')
  return h
}

/** How long a write waits for this mirror to see it before returning anyway (KV already holds it). */
const WRITE_CATCH_UP_MS = 2000
/**
 * Reads of the bucket's last revision (`sync`) start at least this far apart: a stream-info request costs
 * about 0.15 ms of CPU in the caller and 0.26 ms of round trip on one host, so back to back under a stream of
 * events they would take half a core; spaced, at most 200 a second, for at most 5 ms more wait per caller.
 */
const SYNC_READ_SPACING_MS = 5
/** Watch entries applied between two turns of the event loop (about 50 µs each: a few ms at most). */
const WATCH_SLICE = 64

/**
 * A NATS KV bucket kept in memory by a watch, so reads cost no round trip. Writes go to KV and return once
 * this mirror has seen them, which gives a process read-your-writes; other processes see them within the
 * watch latency (milliseconds on one box).
 */
export class KvMirror<T> {
  private readonly entries = new Map<string, Entry<T>>()
  private readonly indexes = new Map<string, Map<string, string>>()
  /** group name → group value → keys of the entries in that group, kept by the watch like the entries. */
  private readonly groups = new Map<string, Map<string, Set<string>>>()
  private readonly waiters: Array<{ revision: number, resolve: (caughtUp: boolean) => void }> = []
  private readonly changeListeners = new Set<(key: string, value: T | undefined, old: T | undefined) => void>()
  private seen = 0
  private watcher?: QueuedIterator<KvWatchEntry>
  /** The last read of the bucket's last revision, when it started, and the read callers now wait for. */
  private revisionRead?: Promise<number>
  private revisionReadAt = 0
  private nextRevisionRead?: Promise<number>

  private constructor (
    readonly kv: KV,
    private readonly indexFns: Record<string, (v: T) => string | undefined>,
    private readonly groupFns: Record<string, (v: T) => string | undefined>,
    private readonly bulkWriter?: JsPublish
  ) {}

  /**
   * Opens the mirror and resolves once every existing entry has been loaded. `indexFns` are unique secondary
   * keys (`getBy`); `groupFns` put entries in groups that share a value (`allBy`). `bulkWriter` makes the writes of
   * `createUnseen` (its caller's, who closes it).
   */
  static async open<T> (
    kv: KV,
    indexFns: Record<string, (v: T) => string | undefined> = {},
    groupFns: Record<string, (v: T) => string | undefined> = {},
    bulkWriter?: JsPublish
  ): Promise<KvMirror<T>> {
    const mirror = new KvMirror<T>(kv, indexFns, groupFns, bulkWriter)
    for (const name of Object.keys(indexFns)) mirror.indexes.set(name, new Map())
    for (const name of Object.keys(groupFns)) mirror.groups.set(name, new Map())
    await mirror.start()
    return mirror
  }

  private async start (): Promise<void> {
    const status = await this.kv.status()
    let markLoaded!: () => void
    const loaded = new Promise<void>((resolve) => { markLoaded = resolve })
    if (status.values === 0) markLoaded()
    this.watcher = await this.kv.watch()
    void (async () => {
      let sinceTurn = 0
      for await (const e of this.watcher!) {
        this.apply(e)
        this.advance(e.revision)
        if (e.delta === 0) markLoaded()
        // A burst of changes (a bulk import) arrives as one run of microtasks, which no I/O can interrupt: other
        // requests get a turn of the event loop every WATCH_SLICE entries.
        if (++sinceTurn === WATCH_SLICE) {
          sinceTurn = 0
          await new Promise((resolve) => setImmediate(resolve))
        }
      }
    })()
    await loaded
    // The initial load holds the last value of every key as of a revision at least this one, even when the
    // bucket's newest revision itself is no longer stored (so `sync` never waits for a revision it cannot see).
    this.advance(status.streamInfo.state.last_seq)
  }

  private apply (e: KvWatchEntry): void {
    const old = this.entries.get(e.key)
    if (old !== undefined) {
      for (const [name, fn] of Object.entries(this.indexFns)) {
        const ix = fn(old.value)
        if (ix !== undefined) this.indexes.get(name)!.delete(ix)
      }
      for (const [name, fn] of Object.entries(this.groupFns)) {
        const g = fn(old.value)
        const keys = g === undefined ? undefined : this.groups.get(name)!.get(g)
        keys?.delete(e.key)
        if (keys?.size === 0) this.groups.get(name)!.delete(g!)
      }
    }
    if (e.operation === 'PUT') {
      const value = JSON.parse(dec.decode(e.value)) as T
      this.entries.set(e.key, { value, revision: e.revision })
      for (const [name, fn] of Object.entries(this.indexFns)) {
        const ix = fn(value)
        if (ix !== undefined) this.indexes.get(name)!.set(ix, e.key)
      }
      for (const [name, fn] of Object.entries(this.groupFns)) {
        const g = fn(value)
        if (g === undefined) continue
        const byValue = this.groups.get(name)!
        let keys = byValue.get(g)
        if (keys === undefined) byValue.set(g, keys = new Set())
        keys.add(e.key)
      }
    } else {
      this.entries.delete(e.key)
    }
    if (this.changeListeners.size > 0) {
      const now = this.entries.get(e.key)?.value
      for (const fn of this.changeListeners) fn(e.key, now, old?.value)
    }
  }

  /**
   * Calls `fn` with every change the watch applies from now on (the new value, or undefined once deleted, and the
   * value it replaced), right after the mirror holds it: for reacting to a change at once instead of at the next
   * read, or for keeping an index of the entries in step. Returns the unsubscribe.
   */
  onChange (fn: (key: string, value: T | undefined, old: T | undefined) => void): () => void {
    this.changeListeners.add(fn)
    return () => { this.changeListeners.delete(fn) }
  }

  /** The watch has applied every revision up to `revision` (only the watch moves this: `sync` relies on it). */
  private advance (revision: number): void {
    if (revision <= this.seen) return
    this.seen = revision
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!
      if (w.revision <= this.seen) {
        this.waiters.splice(i, 1)
        w.resolve(true)
      }
    }
  }

  /** Resolves true once the watch has applied `revision`, or false after `timeoutMs`. */
  private async caughtUp (revision: number, timeoutMs = WRITE_CATCH_UP_MS): Promise<boolean> {
    if (revision <= this.seen) return true
    return await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter)
        if (i >= 0) this.waiters.splice(i, 1)
        resolve(false)
      }, timeoutMs)
      timer.unref()
      const waiter = { revision, resolve: (ok: boolean) => { clearTimeout(timer); resolve(ok) } }
      this.waiters.push(waiter)
    })
  }

  /**
   * Resolves true once this mirror holds every change the bucket had stored when `sync` was called (false if
   * the watch has not caught up within `timeoutMs`): a reader that must not act on a view older than the
   * moment it was asked (the webhook fan-out, for an event published after a webhook changed) awaits this
   * first. Costs one stream-info request, shared by every caller waiting at the same time.
   */
  async sync (timeoutMs: number): Promise<boolean> {
    return await this.caughtUp(await this.lastRevision(), timeoutMs)
  }

  /**
   * The bucket's last revision, read after this call began. A read in flight may have been answered before the
   * caller's reason to ask (it started earlier), so callers share the next read, which starts once the one in
   * flight is answered and at least SYNC_READ_SPACING_MS after it started: one request at a time, however many
   * callers.
   */
  private async lastRevision (): Promise<number> {
    this.nextRevisionRead ??= this.readLastRevision()
    return await this.nextRevisionRead
  }

  private async readLastRevision (): Promise<number> {
    await this.revisionRead?.then(noop, noop)
    const wait = this.revisionReadAt + SYNC_READ_SPACING_MS - Date.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    // Callers from here on ask after this read may have started: they wait for the next one.
    this.nextRevisionRead = undefined
    this.revisionReadAt = Date.now()
    const read = this.kv.status().then((s) => s.streamInfo.state.last_seq)
    this.revisionRead = read
    return await read
  }

  get (key: string): T | undefined {
    return this.entries.get(key)?.value
  }

  revision (key: string): number | undefined {
    return this.entries.get(key)?.revision
  }

  /** Looks up by a secondary index declared at `open`. */
  getBy (index: string, value: string): T | undefined {
    const key = this.indexes.get(index)?.get(value)
    return key === undefined ? undefined : this.get(key)
  }

  /** Values of every entry whose group `group` (declared at `open`) has the value `value`. */
  allBy (group: string, value: string): T[] {
    const out: T[] = []
    for (const key of this.groups.get(group)?.get(value) ?? []) {
      const e = this.entries.get(key)
      if (e !== undefined) out.push(e.value)
    }
    return out
  }

  /** Values whose key starts with `prefix` (e.g. `org_….`), in key order. */
  list (prefix = ''): T[] {
    const out: Array<[string, T]> = []
    for (const [k, e] of this.entries) if (k.startsWith(prefix)) out.push([k, e.value])
    out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    return out.map((x) => x[1])
  }

  /** Every key and value, in no particular order (for building an index once at start). */
  * all (): Generator<[string, T]> {
    for (const [k, e] of this.entries) yield [k, e.value]
  }

  get size (): number {
    return this.entries.size
  }

  async put (key: string, value: T): Promise<void> {
    await this.caughtUp(await this.kv.put(key, enc.encode(JSON.stringify(value))))
  }

  /** Creates the key; throws KvConflictError when it already holds a value. */
  async create (key: string, value: T): Promise<void> {
    let revision: number
    try {
      revision = await this.kv.create(key, enc.encode(JSON.stringify(value)))
    } catch (err) {
      throw isWrongLastSequence(err) ? new KvConflictError(key, { cause: err }) : err
    }
    await this.caughtUp(revision)
  }

  /** Compare-and-set against the revision this mirror last saw. */
  async update (key: string, value: T, revision: number): Promise<void> {
    let next: number
    try {
      next = await this.kv.update(key, enc.encode(JSON.stringify(value)), revision)
    } catch (err) {
      throw isWrongLastSequence(err) ? new KvConflictError(key, { cause: err }) : err
    }
    await this.caughtUp(next)
  }

  /** Read-modify-write with retries on concurrent change; `fn` returns the new value or undefined to stop. */
  async modify (key: string, fn: (current: T) => T | undefined): Promise<T | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const entry = this.entries.get(key)
      if (entry === undefined) return undefined
      const next = fn(entry.value)
      if (next === undefined) return entry.value
      try {
        await this.update(key, next, entry.revision)
        return next
      } catch (err) {
        if (!(err instanceof KvConflictError) || attempt === 4) throw err
        const fresh = await this.kv.get(key)
        if (fresh !== null) this.apply({ ...fresh, delta: 1 } as unknown as KvWatchEntry)
      }
    }
    return undefined
  }

  /**
   * Creates the key without waiting for this mirror to see it: for writing many keys with several in flight, then
   * `waitFor` the highest revision once. Resolves with the new revision, or undefined when the key already held a
   * value (left as it was).
   */
  async createUnseen (key: string, value: T): Promise<number | undefined> {
    const data = enc.encode(JSON.stringify(value))
    if (this.bulkWriter !== undefined) {
      // One map entry per write on a shared reply subscription, where `kv.create` is a client request that builds
      // an Error with its stack once answered (an eighth of the gateway's CPU during a 100,000-address import).
      try {
        return (await this.bulkWriter.publish((this.kv as Bucket).subjectForKey(key, true), data, { headers: expectNewKey() })).seq
      } catch (err) {
        // the key holds a value, or the marker of a deleted one, which `kv.create` tells apart and writes over
        if (!isWrongLastSequence(err)) throw err
      }
    }
    try {
      return await this.kv.create(key, data)
    } catch (err) {
      if (isWrongLastSequence(err)) return undefined
      throw err
    }
  }

  /** Resolves true once this mirror holds `revision` (false after WRITE_CATCH_UP_MS): after `createUnseen`. */
  async waitFor (revision: number): Promise<boolean> {
    return await this.caughtUp(revision)
  }

  /** Deletes the key if it still holds the revision given; false when it changed since (and is left alone). */
  async deleteIfUnchanged (key: string, revision: number): Promise<boolean> {
    try {
      await this.kv.delete(key, { previousSeq: revision })
      return true
    } catch (err) {
      if (isWrongLastSequence(err)) return false
      throw err
    }
  }

  async delete (key: string): Promise<void> {
    await this.kv.delete(key)
    const status = await this.kv.status()
    await this.caughtUp(status.streamInfo.state.last_seq)
  }

  stop (): void {
    this.watcher?.stop()
  }
}
