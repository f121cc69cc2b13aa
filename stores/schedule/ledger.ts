import { DEFAULT_NATS_STORE_MB } from '../../config/mod.ts'
import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { KV_SCHEDULE_DECISIONS, expiringKvBucketOptions } from '../../protocol/mod.ts'

/**
 * The cancels and new times the gateway answered `200` for, in the JetStream KV bucket `ob_schedule_decisions`:
 * `<msg_id>` → `canceled` or `at:<epoch ms>`. Redis decides (one atomic step against the engine's take, see
 * ScheduleState); this bucket keeps the decision where a flushed, evicting or replaced Redis cannot lose it, and
 * the engine reads it before it takes a scheduled message up. Entries expire with the bucket's max age, which
 * is the schedule state's time to live (longer than a message can wait).
 */
export class ScheduleLedger {
  private constructor (private readonly kv: KV) {}

  static async open (
    nc: NatsConnection, replicas: number, ttlMs: number, storeBytes = DEFAULT_NATS_STORE_MB * 1024 * 1024
  ): Promise<ScheduleLedger> {
    const options = expiringKvBucketOptions(replicas, ttlMs, storeBytes, KV_SCHEDULE_DECISIONS)
    return new ScheduleLedger(await new Kvm(nc).create(KV_SCHEDULE_DECISIONS, options))
  }

  /** What was decided for the message: `canceled`, a new time (epoch ms), or nothing. */
  async read (messageId: string): Promise<LedgerEntry> {
    const e = await this.kv.get(messageId)
    if (e === null || e.operation !== 'PUT') return undefined
    const v = e.string()
    if (v === 'canceled') return 'canceled'
    if (v.startsWith('at:')) {
      const at = Number(v.slice(3))
      if (Number.isFinite(at)) return at
    }
    return undefined
  }

  async canceled (messageId: string): Promise<void> {
    await this.kv.put(messageId, 'canceled')
  }

  async rescheduled (messageId: string, at: number): Promise<void> {
    await this.kv.put(messageId, `at:${at}`)
  }
}

/** `canceled`, a new due time in epoch ms, or undefined: nothing was decided after the send. */
export type LedgerEntry = 'canceled' | number | undefined
