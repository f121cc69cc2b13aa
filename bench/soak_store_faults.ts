import {
  jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager
} from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { Redis } from 'ioredis'
import { STREAM_OUTBOUND, admissionLimitBytes } from '../protocol/mod.ts'
import { deleteIfStored } from '../stores/clients/mod.ts'
import type { ServerProcess } from '../test/helpers/servers.ts'
import { sleep } from '../test/integration/faults/fault_env.ts'

/**
 * How the soak makes JetStream full. `queue` (the default): the outbound queue at its admission limit, what the
 * store budget (protocol/store_budget.ts) lets fill. `server`: the whole server's store full, which the budget keeps
 * from happening; every write fails, leases and outcome events included, so nothing is delivered while it lasts.
 */
export type JetStreamFullMode = 'queue' | 'server'

/**
 * The soak's stops and starts of NATS and Redis, and its store faults: JetStream full and Redis at its
 * `maxmemory`. Each server's stops and starts are serialised, so a fault of the cycle (a NATS or Redis restart) and
 * a store fault that spans it never start a server twice; a store fault outlives a restart that happens during it.
 *
 * - JetStream full, `queue`: `OB_OUTBOUND` is filled to its admission limit (three quarters of its `max_bytes`, left
 *   as Outbox set it; protocol/store_budget.ts), where the gateways stop taking sends, with
 *   filler on FILLER_SUBJECT, which no shard consumer reads, so new sends are refused with 503 `queue_full` while
 *   queued mail is delivered (leases, acknowledgements and outcome events have their own shares) and each delivery
 *   frees room for one more send. After the hold the filler is removed message by message.
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
  /** Filler bytes written to the outbound queue to bring it to its admission limit, over every hold. */
  fillerBytes = 0

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

  /** JetStream full for `holdMs`: the outbound queue at its admission limit (`queue`), or every stream (`server`). */
  async jetStreamFull (holdMs: number, mode: JetStreamFullMode): Promise<void> {
    if (mode === 'queue') { await this.outboundQueueFull(holdMs); return }
    await this.withNats(async () => { this.nats.maxFileStore = FULL_STORE_BYTES; await this.nats.stop('SIGTERM'); await this.nats.start() })
    await sleep(holdMs)
    await this.withNats(async () => { this.nats.maxFileStore = undefined; await this.nats.stop('SIGTERM'); await this.nats.start() })
  }

  /**
   * `OB_OUTBOUND` filled to its admission limit for `holdMs` with filler on a subject no shard consumer reads, then the filler
   * purged. Its limit is never touched: lowering `max_bytes` below what a stream holds makes nats-server delete the
   * oldest messages whatever the discard policy (scheduled mail first), which no operator would do. The filler is
   * kept on disk, so it survives NATS restarts during the hold; deliveries free room that senders take back.
   */
  private async outboundQueueFull (holdMs: number): Promise<void> {
    const nc = await connect({ servers: this.nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 })
    try {
      const js = jetstream(nc, { timeout: 5000 })
      const jsm = await jetstreamManager(nc)
      const until = Date.now() + holdMs
      const filler: number[] = []
      // Topped up while the hold lasts: a delivery frees room, and a sender or the filler takes it.
      while (Date.now() < until) {
        this.fillerBytes += await fillOutbound(js, jsm, filler)
        await sleep(Math.max(0, Math.min(FILL_CHECK_MS, until - Date.now())))
      }
      // The filler removed one message at a time, however long NATS takes to answer: the soak's load must not end
      // with the queue full. Never a filtered purge: on nats-server 2.9.10 it makes every consumer of the stream
      // drop its un-acknowledged entries, the deferred and scheduled mail they hold (engine/work_queue_sweep.ts).
      for (const seq of filler) {
        for (let tries = 0; ; tries++) {
          try {
            await deleteIfStored(jsm, STREAM_OUTBOUND, seq)
            break
          } catch (err) {
            if (tries >= 120) throw new Error(`filler message ${seq} could not be removed from OB_OUTBOUND: ${String(err)}`)
            await sleep(500)
          }
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

/** In OB_OUTBOUND's subjects (`ob.out.>`) but no shard's (`ob.out.<n>`): stored and counted, never delivered. */
const FILLER_SUBJECT = 'ob.out.filler'
/** How often the filler is topped up during a hold. */
const FILL_CHECK_MS = 500
/** Filler pieces, largest first: each size is published until the stream refuses it, then the next smaller one. */
const FILLER_PIECES = [4 * 1024 * 1024, 256 * 1024, 16 * 1024, 1024]

/**
 * Publishes filler until `OB_OUTBOUND` refuses even the smallest piece, noting each stored piece's sequence in
 * `stored`; the bytes written. A failure to reach NATS ends the turn.
 */
async function fillOutbound (js: JetStreamClient, jsm: JetStreamManager, stored: number[]): Promise<number> {
  let written = 0
  try {
    const info = await jsm.streams.info(STREAM_OUTBOUND)
    // up to where the gateways stop taking sends, as mail piling up would; the quarter above stays free
    let room = admissionLimitBytes(info.config.max_bytes) - info.state.bytes
    for (const size of FILLER_PIECES) {
      const piece = new Uint8Array(size)
      while (room > size) {
        try {
          stored.push((await js.publish(FILLER_SUBJECT, piece)).seq)
        } catch {
          break // refused: NATS itself has no room for pieces of this size
        }
        written += size
        room -= size
      }
    }
  } catch {
    // NATS restarting: topped up on the next turn.
  }
  return written
}

/** Far below what the soak's store holds once it has started (its streams and buckets): full from the first write. */
const FULL_STORE_BYTES = 4096
