import { jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { Redis } from 'ioredis'
import { STREAM_OUTBOUND } from '../protocol/mod.ts'
import type { ServerProcess } from '../test/helpers/servers.ts'
import { sleep } from '../test/integration/faults/fault_env.ts'

/**
 * How the soak makes JetStream full. `queue` (the default): the outbound queue at its share of the store, what the
 * store budget (protocol/store_budget.ts) lets fill. `server`: the whole server's store full, which the budget keeps
 * from happening; every write fails, leases and outcome events included, so nothing is delivered while it lasts.
 */
export type JetStreamFullMode = 'queue' | 'server'

/**
 * The soak's stops and starts of NATS and Redis, and its store faults: JetStream full and Redis at its
 * `maxmemory`. Each server's stops and starts are serialised, so a fault of the cycle (a NATS or Redis restart) and
 * a store fault that spans it never start a server twice; a store fault outlives a restart that happens during it.
 *
 * - JetStream full, `queue`: `OB_OUTBOUND`'s `max_bytes` is lowered to what it holds (plus a margin, see
 *   SQUEEZE_MARGIN_BYTES), so new sends are refused with 503 `queue_full` while queued mail is delivered (leases,
 *   acknowledgements and outcome events have their own shares) and each delivery frees room for one more send.
 *   Every Outbox process start brings the stream back to its share (ensureStreams), as it should; while the hold
 *   lasts the limit is checked every SQUEEZE_CHECK_MS and lowered again, as Redis's `maxmemory` is set again after
 *   a Redis restart. After the hold the share read before the first squeeze is put back.
 * - JetStream full, `server` (not the default): nats-server is restarted (SIGTERM, as an operator would) with
 *   `max_file_store` far below what its store already holds, so every write to every stream fails with
 *   `insufficient resources`; after the hold it is restarted with its own limit again.
 * - Redis full: `CONFIG SET maxmemory` to 1 byte with `noeviction`, so every write command fails with `OOM` while
 *   reads go on; after the hold the setting is restored. A Redis restart during the hold gets the setting again.
 */
export class SoakServers {
  private natsTurn: Promise<unknown> = Promise.resolve()
  private redisTurn: Promise<unknown> = Promise.resolve()
  private redisFull = false
  private redisSettings?: { maxmemory: string, policy: string }
  /** `OB_OUTBOUND`'s own `max_bytes` (its share of OB_NATS_STORE_MB), read before the first squeeze. */
  private outboundMaxBytes?: number
  /** Times the outbound queue's limit was lowered (once per hold, again after each process start that raised it). */
  squeezes = 0

  constructor (private readonly nats: ServerProcess, private readonly redis: ServerProcess) {}

  /** NATS killed (SIGKILL) and started again on its store after `downMs`. */
  async killNats (downMs: number): Promise<void> {
    await this.withNats(async () => { await this.nats.stop('SIGKILL'); await sleep(downMs); await this.nats.start() })
  }

  /** Redis killed (SIGKILL) and started again on its append-only file after `downMs`; still full if it was. */
  async killRedis (downMs: number): Promise<void> {
    await this.withRedis(async () => {
      await this.redis.stop('SIGKILL')
      await sleep(downMs)
      await this.redis.start()
      if (this.redisFull) await this.setRedisFull(true)
    })
  }

  /** JetStream full for `holdMs`: the outbound queue at its share (`queue`), or every stream (`server`). */
  async jetStreamFull (holdMs: number, mode: JetStreamFullMode): Promise<void> {
    if (mode === 'queue') { await this.outboundQueueFull(holdMs); return }
    await this.withNats(async () => { this.nats.maxFileStore = FULL_STORE_BYTES; await this.nats.stop('SIGTERM'); await this.nats.start() })
    await sleep(holdMs)
    await this.withNats(async () => { this.nats.maxFileStore = undefined; await this.nats.stop('SIGTERM'); await this.nats.start() })
  }

  /**
   * `OB_OUTBOUND` held at what it stores for `holdMs`, then given its share back. NATS may restart meanwhile: a
   * check or update that fails is tried again on the next turn; the connection reconnects on its own.
   */
  private async outboundQueueFull (holdMs: number): Promise<void> {
    const nc = await connect({ servers: this.nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 })
    try {
      const jsm = await jetstreamManager(nc)
      const until = Date.now() + holdMs
      let squeezedTo: number | undefined
      while (Date.now() < until) {
        try {
          const info = await jsm.streams.info(STREAM_OUTBOUND)
          this.outboundMaxBytes ??= info.config.max_bytes
          // First turn, or a process start brought the stream back to its share.
          if (info.config.max_bytes !== squeezedTo) {
            const limit = Math.max(info.state.bytes + SQUEEZE_MARGIN_BYTES, 1024)
            await jsm.streams.update(STREAM_OUTBOUND, { ...info.config, max_bytes: limit })
            squeezedTo = limit
            this.squeezes++
          }
        } catch {
          // NATS restarting: checked again on the next turn.
        }
        await sleep(Math.max(0, Math.min(SQUEEZE_CHECK_MS, until - Date.now())))
      }
      // The share back, however long NATS takes to answer: the soak's load must not end with the queue squeezed.
      for (let tries = 0; this.outboundMaxBytes !== undefined; tries++) {
        try {
          const info = await jsm.streams.info(STREAM_OUTBOUND)
          if (info.config.max_bytes !== this.outboundMaxBytes) await jsm.streams.update(STREAM_OUTBOUND, { ...info.config, max_bytes: this.outboundMaxBytes })
          return
        } catch (err) {
          if (tries >= 120) throw new Error(`OB_OUTBOUND's max_bytes could not be restored: ${String(err)}`)
          await sleep(500)
        }
      }
    } finally {
      await nc.close()
    }
  }

  /** Redis at its `maxmemory` for `holdMs`: every write command is refused. */
  async redisFullFor (holdMs: number): Promise<void> {
    await this.withRedis(async () => { this.redisFull = true; await this.setRedisFull(true) })
    await sleep(holdMs)
    await this.withRedis(async () => { this.redisFull = false; await this.setRedisFull(false) })
  }

  private async setRedisFull (full: boolean): Promise<void> {
    const r = new Redis(this.redis.url, { maxRetriesPerRequest: 20, lazyConnect: true })
    try {
      await r.connect()
      if (full) {
        if (this.redisSettings === undefined) {
          const [, maxmemory] = await r.config('GET', 'maxmemory') as [string, string]
          const [, policy] = await r.config('GET', 'maxmemory-policy') as [string, string]
          this.redisSettings = { maxmemory, policy }
        }
        await r.config('SET', 'maxmemory-policy', 'noeviction')
        await r.config('SET', 'maxmemory', '1')
      } else {
        await r.config('SET', 'maxmemory', this.redisSettings?.maxmemory ?? '0')
        await r.config('SET', 'maxmemory-policy', this.redisSettings?.policy ?? 'noeviction')
      }
    } finally {
      r.disconnect()
    }
  }

  private async withNats (fn: () => Promise<void>): Promise<void> {
    const turn = this.natsTurn.then(fn)
    this.natsTurn = turn.catch(() => {})
    await turn
  }

  private async withRedis (fn: () => Promise<void>): Promise<void> {
    const turn = this.redisTurn.then(fn)
    this.redisTurn = turn.catch(() => {})
    await turn
  }
}

/**
 * Room left above what the outbound queue holds when its limit is lowered. nats-server deletes a stream's oldest
 * messages when its `max_bytes` is lowered below what it holds, whatever its discard policy, and sends keep landing
 * between reading the stream's size and lowering its limit: 32 KB is about 25 soak messages, more than the soak's
 * five senders (each waiting for its answer) can add in that round trip, and less than the queue grows by when
 * delivery pauses for an engine start, so the queue does fill.
 */
const SQUEEZE_MARGIN_BYTES = 32 * 1024
/** How often the squeezed limit is checked: a process start that put the share back is undone within this. */
const SQUEEZE_CHECK_MS = 500

/** Far below what the soak's store holds once it has started (its streams and buckets): full from the first write. */
const FULL_STORE_BYTES = 4096
