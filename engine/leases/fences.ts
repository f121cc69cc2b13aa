/**
 * Until when each shard's work may still begin an SMTP transaction in this process: the end of the lease term it
 * last renewed, less one renew interval, so a transaction never starts once another process may take the shard over.
 * The times live in shared memory that the lease table writes and every shard thread reads before each transaction:
 * a message in hand when the lease goes (a host cut off from NATS, a process frozen past its term) is never sent by
 * the old owner once its link or its clock comes back, however long it waited on a socket or in a queue meanwhile.
 *
 * Plain data in a SharedArrayBuffer, so it crosses into the threads (`ActorSettings.fences`); 0 means closed.
 */
export class ShardFences {
  readonly buffer: SharedArrayBuffer
  private readonly until: BigInt64Array

  /** `shards`: a new table with every fence closed; a buffer: the table another thread made. */
  constructor (shards: number | SharedArrayBuffer) {
    this.buffer = typeof shards === 'number' ? new SharedArrayBuffer(8 * shards) : shards
    this.until = new BigInt64Array(this.buffer)
  }

  /** The shard's work may start transactions until `untilMs` (epoch ms). */
  openUntil (shard: number, untilMs: number): void {
    if (shard < this.until.length) Atomics.store(this.until, shard, BigInt(Math.floor(untilMs)))
  }

  close (shard: number): void {
    if (shard < this.until.length) Atomics.store(this.until, shard, 0n)
  }

  /** True while this process may start a transaction for the shard's mail. */
  open (shard: number, now = Date.now()): boolean {
    return shard < this.until.length && now < Number(Atomics.load(this.until, shard))
  }
}
