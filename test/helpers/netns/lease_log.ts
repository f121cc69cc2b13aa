import { KvWatchInclude } from '@nats-io/kv'
import type { LeaseRecord } from '../../../engine/leases/mod.ts'
import type { Lab } from './lab.ts'

/**
 * Every change to the outbound shard leases from the moment it starts, in the bucket's order: a watch on
 * `outbound.shard.*` of the lab's lease bucket. It tells how a shard moved: a lease deleted by its holder and then
 * created by another engine was handed over (released on a rebalance or at SIGTERM); a lease updated by another
 * engine while still written by the first was taken over after it expired.
 */
export interface LeaseChange {
  shard: number
  op: 'PUT' | 'DEL' | 'PURGE'
  /** The writer's lease owner id (PUT only). */
  owner?: string
  revision: number
  /** When the bucket stored the change (the NATS server's clock, the same machine's). */
  at: number
}

export class LeaseLog {
  readonly changes: LeaseChange[] = []
  private constructor (private readonly lab: Lab, private readonly stopWatch: () => void, private readonly done: Promise<void>) {}

  static async start (lab: Lab): Promise<LeaseLog> {
    const watch = await lab.leases.watch({ key: 'outbound.shard.*', include: KvWatchInclude.UpdatesOnly })
    let log!: LeaseLog
    const done = (async () => {
      for await (const e of watch) {
        const owner = e.operation === 'PUT' ? (e.json<LeaseRecord>()).owner : undefined
        log.changes.push({
          shard: Number(e.key.split('.').at(-1)),
          op: e.operation,
          revision: e.revision,
          at: e.created.getTime(),
          ...(owner !== undefined ? { owner } : {})
        })
      }
    })()
    log = new LeaseLog(lab, () => { watch.stop() }, done)
    return log
  }

  /** Changes to `shard` stored at or after `from`, oldest first. */
  of (shard: number, from = 0): LeaseChange[] {
    return this.changes.filter((c) => c.shard === shard && c.at >= from)
  }

  /**
   * How `shard` came to the engine on host `address` after `from`: `handed over` when the change before its first
   * write was a delete (its holder released it), `taken over` when it was another engine's write (the lease had
   * expired), `claimed` when nothing came before it in the log; undefined when that engine did not write it.
   */
  howMoved (shard: number, address: string, from: number): 'handed over' | 'taken over' | 'claimed' | undefined {
    const list = this.of(shard, from)
    const i = list.findIndex((c) => c.op === 'PUT' && c.owner !== undefined && this.lab.ownerAddress(c.owner) === address)
    if (i === -1) return undefined
    if (i === 0) return 'claimed'
    return list[i - 1]!.op === 'PUT' ? 'taken over' : 'handed over'
  }

  async stop (): Promise<void> {
    this.stopWatch()
    await this.done.catch(() => {})
  }
}
