import { Redis } from 'ioredis'
import type { ServerProcess } from '../test/helpers/servers.ts'
import { sleep } from '../test/integration/faults/fault_env.ts'

/**
 * The soak's stops and starts of NATS and Redis, and its store faults: JetStream's store full and Redis at its
 * `maxmemory`. Each server's stops and starts are serialised, so a fault of the cycle (a NATS or Redis restart) and
 * a store fault that spans it never start a server twice; a store fault outlives a restart that happens during it.
 *
 * - JetStream full: nats-server is restarted (SIGTERM, as an operator would) with `max_file_store` far below what
 *   its store already holds, so every write to every stream fails with `insufficient resources` while reads,
 *   deliveries and acknowledgements go on; after the hold it is restarted with its own limit again.
 * - Redis full: `CONFIG SET maxmemory` to 1 byte with `noeviction`, so every write command fails with `OOM` while
 *   reads go on; after the hold the setting is restored. A Redis restart during the hold gets the setting again.
 */
export class SoakServers {
  private natsTurn: Promise<unknown> = Promise.resolve()
  private redisTurn: Promise<unknown> = Promise.resolve()
  private redisFull = false
  private redisSettings?: { maxmemory: string, policy: string }

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

  /** JetStream's store full for `holdMs`: every stream refuses writes. */
  async jetStreamFull (holdMs: number): Promise<void> {
    await this.withNats(async () => { this.nats.maxFileStore = FULL_STORE_BYTES; await this.nats.stop('SIGTERM'); await this.nats.start() })
    await sleep(holdMs)
    await this.withNats(async () => { this.nats.maxFileStore = undefined; await this.nats.stop('SIGTERM'); await this.nats.start() })
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

/** Far below what the soak's store holds once it has started (its streams and buckets): full from the first write. */
const FULL_STORE_BYTES = 4096
