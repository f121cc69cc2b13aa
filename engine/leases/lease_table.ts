import type { KV, KvEntry } from '@nats-io/kv'
import type { Logger } from 'pino'
import { isWrongLastSequence } from '../../stores/clients/mod.ts'
import type { ShardFences } from './fences.ts'

/** The bucket, and a way to list its keys matching a subject filter such as `outbound.member.*`. */
export interface LeaseBucket { kv: KV, keys: (filter: string) => Promise<string[]> }

/** What a lease key and a presence key hold; `expires_at` is epoch milliseconds of the writer's clock. */
export interface LeaseRecord { owner: string, expires_at: number }

export interface LeaseTableOptions {
  /** Name of the kind of work, e.g. `outbound` or `webhook`; prefixes every key so kinds share one bucket. */
  readonly group: string
  /** Units (shards) numbered 0..units-1. */
  readonly units: number
  /** This process; letters, digits, `-` and `_` only (it is a key token). */
  readonly ownerId: string
  readonly leaseMs: number
  readonly renewMs: number
  readonly log: Logger
  /**
   * A unit is now ours: begin work on it, calling `fence()` before every pull. `expiredOwner`: the process whose lease
   * had run out when this one took it (undefined for a unit that was free: never held, released or long dead), which
   * may still be finishing work it started.
   */
  readonly start: (unit: number, fence: () => boolean, expiredOwner?: string) => void
  /** Stop pulling for a unit and resolve once the work in hand finished or `deadline` passed. */
  readonly stop: (unit: number, deadline: number) => Promise<void>
  /** How long a released or lost unit may take to finish its work in hand. */
  readonly drainMs: number
  /**
   * Where the work in hand learns until when it may still act (fences.ts): open to the end of each renewed term less
   * one renew interval, closed the moment a unit is lost or its lease deleted. A unit being released stays open
   * while it drains: its lease is still renewed.
   */
  readonly fences?: ShardFences
}

interface Held {
  revision: number
  /** Local time the current lease term was computed from; the term ends at `basis + leaseMs`. */
  basis: number
  /** The last renew failed for a reason other than a lost race: do not pull until one succeeds. */
  doubtful: boolean
  releasing: boolean
}

const enc = new TextEncoder()
const dec = new TextDecoder()

function live (e: KvEntry | null): LeaseRecord | undefined {
  if (e === null || e.operation !== 'PUT') return undefined
  try {
    return JSON.parse(dec.decode(e.value)) as LeaseRecord
  } catch {
    return undefined
  }
}

/**
 * How many units `self` should hold: units / members, one more for the first (units mod members) members in id
 * order. The shares add up to exactly `units`, so no process is left idle (rounding every share up would give
 * 12 units over 5 processes as 3+3+3+3+0). A process missing from the list (its presence write failed) counts
 * as one more member, last in order.
 */
export function shareOf (units: number, members: readonly string[], self: string): number {
  const ids = [...new Set([...members].sort())]
  let index = ids.indexOf(self)
  if (index === -1) { index = ids.length; ids.push(self) }
  const base = Math.floor(units / ids.length)
  return base + (index < units % ids.length ? 1 : 0)
}

/**
 * Leases on numbered units of work held in one NATS KV bucket. Each process announces itself with a presence
 * key, aims to hold its share of the units (`shareOf`), claims free or expired units with `create` or a
 * compare-and-set `update` on the revision it read, renews what it holds every `renewMs`, and releases its
 * surplus (drained first) when a newcomer joins. A unit's work runs only while `fence()` is true: the lease is
 * held at the revision this process wrote last, the last renew succeeded, and the term has at least one renew
 * interval left, so the holder stops pulling before any other process may consider the lease expired.
 */
export class LeaseTable {
  private readonly held = new Map<number, Held>()
  private timer?: NodeJS.Timeout
  /** The renew and the balance round run on separate chains, so a slow claim never delays a renew. */
  private renewing?: Promise<void>
  private balancing?: Promise<void>
  private closed = false
  /** Closing: no more claims or releases; renewals go on until the units have drained. */
  private closing = false
  private readonly kv: KV

  constructor (private readonly bucket: LeaseBucket, private readonly opts: LeaseTableOptions) {
    this.kv = bucket.kv
  }

  private unitKey (unit: number): string { return `${this.opts.group}.shard.${unit}` }
  private memberKey (id: string): string { return `${this.opts.group}.member.${id}` }
  private record (now: number): Uint8Array {
    return enc.encode(JSON.stringify({ owner: this.opts.ownerId, expires_at: now + this.opts.leaseMs } satisfies LeaseRecord))
  }

  /** Units this process holds (including ones being released). */
  units (): number[] {
    return [...this.held.keys()].sort((a, b) => a - b)
  }

  /** True while work on `unit` may be pulled. */
  holds (unit: number): boolean {
    const h = this.held.get(unit)
    return h !== undefined && !h.doubtful && !h.releasing && Date.now() < h.basis + this.opts.leaseMs - this.opts.renewMs
  }

  /** Announces this process and claims its share; resolves after the first round. */
  async start (): Promise<void> {
    await this.renewRound()
    await this.balanceRound()
    // a round still running when the next is due is not queued behind: the next tick starts afresh
    this.timer = setInterval(() => {
      this.renewing ??= this.renewRound().finally(() => { this.renewing = undefined })
      this.balancing ??= this.balanceRound().finally(() => { this.balancing = undefined })
    }, this.opts.renewMs)
  }

  private async renewRound (): Promise<void> {
    if (this.closed) return
    const presence = this.kv.put(this.memberKey(this.opts.ownerId), this.record(Date.now())).catch((err: unknown) => {
      this.opts.log.warn({ err, group: this.opts.group }, 'presence renew failed')
    })
    await Promise.all([presence, this.renewAll()])
  }

  private async balanceRound (): Promise<void> {
    if (this.closing) return
    try {
      const members = await this.liveMembers(Date.now())
      if (this.closing) return
      const target = shareOf(this.opts.units, members, this.opts.ownerId)
      const active = [...this.held.entries()].filter(([, h]) => !h.releasing).map(([u]) => u)
      if (active.length > target) {
        for (const unit of active.sort((a, b) => b - a).slice(0, active.length - target)) this.release(unit)
      } else if (active.length < target) {
        await this.claim(target - active.length)
      }
    } catch (err) {
      this.opts.log.warn({ err, group: this.opts.group }, 'lease balance round failed; retrying')
    }
  }

  private async renewAll (): Promise<void> {
    await Promise.all([...this.held].map(async ([unit, h]) => {
      const basis = Date.now()
      try {
        h.revision = await this.kv.update(this.unitKey(unit), this.record(basis), h.revision)
        h.basis = basis
        h.doubtful = false
        if (this.held.get(unit) === h) this.fence(unit, basis)
      } catch (err) {
        if (isWrongLastSequence(err)) {
          // a renew that timed out may still have been written: then the newer revision is our own
          const e = await this.kv.get(this.unitKey(unit)).catch(() => null)
          if (live(e)?.owner === this.opts.ownerId && this.held.get(unit) === h) h.revision = e!.revision
          else this.lose(unit, 'the lease revision moved')
        } else {
          h.doubtful = true // pause pulls; the lease is still ours unless the next renews fail past the term
          if (Date.now() >= h.basis + this.opts.leaseMs) this.lose(unit, 'renewals failed for a whole lease term')
          else this.opts.log.warn({ err, unit, group: this.opts.group }, 'lease renew failed; pulls paused')
        }
      }
    }))
  }

  /** Owner ids of the processes whose presence has not expired. */
  private async liveMembers (now: number): Promise<string[]> {
    const ids: string[] = []
    for (const key of await this.bucket.keys(`${this.opts.group}.member.*`)) {
      const e = await this.kv.get(key)
      const rec = live(e)
      if (rec !== undefined && rec.expires_at > now) ids.push(rec.owner)
      else if (rec !== undefined && e !== null && rec.expires_at + this.opts.leaseMs < now) {
        await this.kv.delete(key, { previousSeq: e.revision }).catch(() => {}) // long dead: tidy up
      }
    }
    return ids
  }

  private async claim (wanted: number): Promise<void> {
    const offset = Math.floor(Math.random() * this.opts.units) // spread concurrent claimers over the units
    for (let i = 0; i < this.opts.units && wanted > 0; i++) {
      const unit = (offset + i) % this.opts.units
      if (this.held.has(unit)) continue
      const key = this.unitKey(unit)
      const basis = Date.now()
      try {
        const e = await this.kv.get(key)
        const rec = live(e)
        let revision: number
        if (rec === undefined) revision = await this.kv.create(key, this.record(basis))
        else if (rec.expires_at < basis) revision = await this.kv.update(key, this.record(basis), e!.revision)
        else continue
        this.held.set(unit, { revision, basis, doubtful: false, releasing: false })
        this.fence(unit, basis)
        wanted--
        this.opts.log.info({ unit, group: this.opts.group, previous: rec?.owner ?? null }, 'lease acquired')
        this.opts.start(unit, () => this.holds(unit), rec?.owner)
      } catch (err) {
        // Wrong last sequence: another process won this one.
        if (!isWrongLastSequence(err)) throw err
      }
    }
  }

  /** Work on `unit` may act until one renew interval before the term that began at `basis` ends. */
  private fence (unit: number, basis: number): void {
    this.opts.fences?.openUntil(unit, basis + this.opts.leaseMs - this.opts.renewMs)
  }

  private lose (unit: number, reason: string): void {
    this.held.delete(unit)
    this.opts.fences?.close(unit)
    this.opts.log.warn({ unit, group: this.opts.group, reason }, 'lease lost; work in hand finishes, no more pulls')
    void this.opts.stop(unit, Date.now() + this.opts.drainMs)
  }

  /** Drains the unit while still renewing its lease, then deletes the lease so another process may claim it. */
  private release (unit: number): void {
    const h = this.held.get(unit)
    if (h === undefined || h.releasing) return
    h.releasing = true
    this.opts.log.info({ unit, group: this.opts.group }, 'releasing surplus lease')
    void this.opts.stop(unit, Date.now() + this.opts.drainMs).then(async () => {
      await this.renewing // no renew of this key is in flight while it is deleted
      const now = this.held.get(unit)
      if (now !== h) return // lost meanwhile
      this.held.delete(unit)
      this.opts.fences?.close(unit)
      await this.kv.delete(this.unitKey(unit), { previousSeq: h.revision }).catch(() => {})
    })
  }

  /**
   * Stops claiming, drains every unit until `deadline` while still renewing its lease (so the work in hand may go on
   * sending and no other process takes the unit meanwhile), then stops renewing and deletes the leases and presence.
   */
  async close (deadline: number): Promise<void> {
    if (this.closing) return
    this.closing = true
    await this.balancing
    const mine = [...this.held]
    await Promise.all(mine.map(async ([unit]) => await this.opts.stop(unit, deadline)))
    this.closed = true
    clearInterval(this.timer)
    await this.renewing
    this.held.clear()
    for (const [unit] of mine) this.opts.fences?.close(unit)
    await Promise.all(mine.map(async ([unit, h]) => await this.kv.delete(this.unitKey(unit), { previousSeq: h.revision }).catch(() => {})))
    await this.kv.delete(this.memberKey(this.opts.ownerId)).catch(() => {})
  }
}
