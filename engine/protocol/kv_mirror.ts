import type { KV, KvWatchEntry } from '@nats-io/kv'
import type { QueuedIterator } from '@nats-io/transport-node'

const enc = new TextEncoder()
const dec = new TextDecoder()

export class KvConflictError extends Error {
  readonly code = 'kv_conflict'
  constructor (readonly key: string, opts?: ErrorOptions) {
    super(`key ${key} already exists or changed`, opts)
    this.name = 'KvConflictError'
  }
}

/** JetStream's "wrong last sequence" (API error 10071): someone else wrote the key first. */
function isSequenceConflict (err: unknown): boolean {
  const e = err as { api_error?: { err_code?: number }, code?: unknown, message?: string }
  return e.code === 10071 || e.api_error?.err_code === 10071 || /wrong last sequence|key exists/i.test(String(e.message))
}

interface Entry<T> { value: T, revision: number }

/**
 * A NATS KV bucket kept in memory by a watch, so reads cost no round trip. Writes go to KV and return once
 * this mirror has seen them, which gives a process read-your-writes; other processes see them within the
 * watch latency (milliseconds on one box).
 */
export class KvMirror<T> {
  private readonly entries = new Map<string, Entry<T>>()
  private readonly indexes = new Map<string, Map<string, string>>()
  private readonly waiters: Array<{ revision: number, resolve: () => void }> = []
  private seen = 0
  private watcher?: QueuedIterator<KvWatchEntry>

  private constructor (readonly kv: KV, private readonly indexFns: Record<string, (v: T) => string | undefined>) {}

  /** Opens the mirror and resolves once every existing entry has been loaded. */
  static async open<T> (kv: KV, indexFns: Record<string, (v: T) => string | undefined> = {}): Promise<KvMirror<T>> {
    const mirror = new KvMirror<T>(kv, indexFns)
    for (const name of Object.keys(indexFns)) mirror.indexes.set(name, new Map())
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
      for await (const e of this.watcher!) {
        this.apply(e)
        if (e.delta === 0) markLoaded()
      }
    })()
    await loaded
  }

  private apply (e: KvWatchEntry): void {
    const old = this.entries.get(e.key)
    if (old !== undefined) {
      for (const [name, fn] of Object.entries(this.indexFns)) {
        const ix = fn(old.value)
        if (ix !== undefined) this.indexes.get(name)!.delete(ix)
      }
    }
    if (e.operation === 'PUT') {
      const value = JSON.parse(dec.decode(e.value)) as T
      this.entries.set(e.key, { value, revision: e.revision })
      for (const [name, fn] of Object.entries(this.indexFns)) {
        const ix = fn(value)
        if (ix !== undefined) this.indexes.get(name)!.set(ix, e.key)
      }
    } else {
      this.entries.delete(e.key)
    }
    this.seen = Math.max(this.seen, e.revision)
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!
      if (w.revision <= this.seen) {
        this.waiters.splice(i, 1)
        w.resolve()
      }
    }
  }

  private async caughtUp (revision: number): Promise<void> {
    if (revision <= this.seen) return
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2000) // never block a request on a stalled watch; KV already has the write
      timer.unref()
      this.waiters.push({ revision, resolve: () => { clearTimeout(timer); resolve() } })
    })
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

  /** Values whose key starts with `prefix` (e.g. `org_….`), in key order. */
  list (prefix = ''): T[] {
    const out: Array<[string, T]> = []
    for (const [k, e] of this.entries) if (k.startsWith(prefix)) out.push([k, e.value])
    out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    return out.map((x) => x[1])
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
      throw isSequenceConflict(err) ? new KvConflictError(key, { cause: err }) : err
    }
    await this.caughtUp(revision)
  }

  /** Compare-and-set against the revision this mirror last saw. */
  async update (key: string, value: T, revision: number): Promise<void> {
    let next: number
    try {
      next = await this.kv.update(key, enc.encode(JSON.stringify(value)), revision)
    } catch (err) {
      throw isSequenceConflict(err) ? new KvConflictError(key, { cause: err }) : err
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

  async delete (key: string): Promise<void> {
    await this.kv.delete(key)
    const status = await this.kv.status()
    await this.caughtUp(status.streamInfo.state.last_seq)
  }

  stop (): void {
    this.watcher?.stop()
  }
}
