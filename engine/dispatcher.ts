import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream'
import type { Logger } from 'pino'
import { CLOCK_SKEW_MS, type ConnectionEpoch } from './connection_epoch.ts'
import type { Fate, MessageProcessor } from './process_message.ts'
import { WAKE_HEADER } from '../protocol/mod.ts'

const HANDBACK_RETRY_MS = 5_000 // an unexpected error: the message comes back in 5 s
const FETCH_EXPIRES_MS = 5_000 // an idle shard renews its pull request every 5 s
const BATCH_WAIT_MS = 5 // after a slot frees, wait this long for more before pulling, so pulls are not one message each
const ERROR_PAUSE_MS = 1_000
const FENCE_PAUSE_MS = 100 // while the shard lease is in doubt, look again this often

interface InHand {
  /** The delivery being worked on, plus any redelivery of the same stream message that arrived meanwhile. */
  copies: JsMsg[]
  done: Promise<void>
}

/**
 * The pull loop of one shard. It pulls only as many messages as the shard has free slots
 * (`fetch({max_messages: free})`), so every message it holds is being worked on: none waits in a buffer
 * while its ack_wait runs out. Each message in hand gets `working()` every third of ack_wait, so a slow SMTP
 * server never makes JetStream hand it to someone else mid-transaction. Should a redelivery of a message in
 * hand still arrive (the event loop was blocked past ack_wait), it is not processed a second time: it shares
 * the fate of the copy in progress.
 *
 * `epoch` tells a first delivery that may repeat an earlier one (engine/connection_epoch.ts); so do the shard's own
 * marks (`mayRepeat`).
 *
 * `fence()` says whether this process still holds the shard's lease (engine/leases/); it is checked before
 * every pull and for every pulled message, so a process that lost the lease stops taking work at once.
 *
 * `repeatsFrom`: when the shard was taken from a process whose lease ran out, the time by which that process's SMTP
 * transactions have ended (engine/actor/fenced_sends.ts). Until then a message that may have been handed out before
 * waits in hand before its delivery state is read: JetStream can hand it over sooner than ack_wait after the old
 * owner's last progress signal (a consumer leader lost with a NATS node forgets those signals), while the old owner is
 * still in its transaction and has not recorded the reply.
 */
export class ShardDispatcher {
  private batch?: ConsumerMessages
  private readonly inHand = new Map<number, InHand>()
  private slotFreed?: () => void
  private stopping = false
  private loop?: Promise<void>
  private handedBack = 0
  /** The highest stream sequence this dispatcher has been handed, and when it took the shard. */
  private highestSeq = 0
  private readonly takenAt = Date.now()
  /** Wakes the messages held until `repeatsFrom` when the shard drains. */
  private readonly holds = new Set<() => void>()

  constructor (
    readonly shard: number,
    private readonly consumer: Consumer,
    private readonly processor: MessageProcessor,
    private readonly capacity: number,
    private readonly ackWaitMs: number,
    private readonly log: Logger,
    private readonly fence: () => boolean = () => true,
    private readonly epoch?: ConnectionEpoch,
    private readonly repeatsFrom = 0
  ) {}

  start (): void {
    this.loop = this.run()
  }

  private get free (): number {
    return this.capacity - this.inHand.size
  }

  private async waitForSlot (): Promise<void> {
    while (this.free <= 0 && !this.stopping) await new Promise<void>((resolve) => { this.slotFreed = resolve })
    if (this.free < this.capacity / 4 && !this.stopping) await new Promise((resolve) => setTimeout(resolve, BATCH_WAIT_MS))
  }

  private async run (): Promise<void> {
    while (!this.stopping) {
      await this.waitForSlot()
      if (this.stopping) break
      if (!this.fence()) {
        await new Promise((resolve) => setTimeout(resolve, FENCE_PAUSE_MS))
        continue
      }
      try {
        this.batch = await this.consumer.fetch({ max_messages: this.free, expires: FETCH_EXPIRES_MS })
        for await (const m of this.batch) {
          if (this.stopping || !this.fence()) {
            m.nak() // pulled but not started: hand it straight back
            continue
          }
          this.take(m)
        }
      } catch (err) {
        if (this.stopping) break
        this.log.warn({ err, shard: this.shard }, 'pull failed; retrying')
        await new Promise((resolve) => setTimeout(resolve, ERROR_PAUSE_MS))
      }
    }
  }

  private take (m: JsMsg): void {
    const current = this.inHand.get(m.seq)
    if (current !== undefined) {
      current.copies.push(m)
      return
    }
    const entry: InHand = { copies: [m], done: Promise.resolve() }
    this.inHand.set(m.seq, entry)
    entry.done = this.handle(m, entry).finally(() => {
      this.inHand.delete(m.seq)
      const wake = this.slotFreed
      this.slotFreed = undefined
      wake?.()
    })
  }

  private async handle (m: JsMsg, entry: InHand): Promise<void> {
    const keepAlive = setInterval(() => { for (const c of entry.copies) c.working() }, Math.max(300, Math.floor(this.ackWaitMs / 3)))
    let fate: Fate
    try {
      // A copy an operator woke (stores/queues/wake.ts) replaces a message that was delivered before: its state is read.
      // A retry applies on the copy's first delivery only; a bounce on each (it only brings forward what its order does).
      const header = m.headers?.get(WAKE_HEADER) ?? ''
      const wake = header !== '' && (m.info.deliveryCount === 1 || header.startsWith('bounce;')) ? header : undefined
      // A first delivery that may repeat one a lost NATS server forgot counts as a redelivery: its state is read.
      const repeat = this.mayRepeat(m) || header !== ''
      if (repeat && !await this.afterPreviousOwner()) fate = { kind: 'nak', delayMs: 0 }
      else fate = await this.processor.process(this.shard, m.data, repeat ? Math.max(2, m.info.deliveryCount) : 1, m.seq, wake)
    } catch (err) {
      this.log.error({ err, shard: this.shard, seq: m.seq }, 'message processing failed; handed back')
      fate = { kind: 'nak', delayMs: HANDBACK_RETRY_MS }
    } finally {
      clearInterval(keepAlive)
    }
    if (!this.inHand.has(m.seq)) return // handed back at the drain deadline already
    for (const c of entry.copies) {
      if (fate.kind === 'nak') c.nak(fate.delayMs)
      else c.ack()
    }
  }

  /**
   * Whether the message may have been handed out before, so its delivery state is read before it is sent.
   *
   * Beyond a delivery count over 1 and the connection's epoch: a consumer hands out first deliveries in stream order,
   * so a first delivery at or below a sequence this shard was already handed is the consumer going back. That is what
   * a consumer whose leader was on a lost NATS node does when the node that takes over had not yet learned what the
   * old leader handed out (nats-server 2.9 replicates that state moments after the fact), while this process's own
   * connection, to another node, never dropped. And a message published before this process took the shard may
   * have been sent by the shard's previous owner and handed out again the same way.
   */
  private mayRepeat (m: JsMsg): boolean {
    const wentBack = m.seq <= this.highestSeq
    if (!wentBack) this.highestSeq = m.seq
    const publishedMs = m.info.timestampNanos / 1e6
    return wentBack || m.info.deliveryCount > 1 || publishedMs <= this.takenAt + CLOCK_SKEW_MS ||
      (this.epoch?.mayBeRepeat(m.info.deliveryCount, publishedMs) ?? false)
  }

  /** Waits until `repeatsFrom`; false when the shard drains meanwhile, so the message is handed back unsent. */
  private async afterPreviousOwner (): Promise<boolean> {
    const ms = this.repeatsFrom - Date.now()
    if (ms <= 0) return true
    let timer: NodeJS.Timeout | undefined
    let wake = (): void => {}
    await new Promise<void>((resolve) => {
      wake = resolve
      this.holds.add(wake)
      timer = setTimeout(resolve, ms)
    })
    clearTimeout(timer)
    this.holds.delete(wake)
    return !this.stopping && this.fence()
  }

  /** Stops pulling, waits for messages in hand until `deadline`, then hands the rest back to JetStream. */
  async drain (deadline: number): Promise<void> {
    this.stopping = true
    this.batch?.stop()
    this.slotFreed?.()
    for (const wake of this.holds) wake()
    await this.loop
    let timer: NodeJS.Timeout | undefined
    const all = Promise.all([...this.inHand.values()].map(async (e) => await e.done))
    await Promise.race([all, new Promise((resolve) => { timer = setTimeout(resolve, Math.max(0, deadline - Date.now())) })])
    clearTimeout(timer)
    for (const [seq, e] of this.inHand) {
      this.inHand.delete(seq)
      for (const c of e.copies) c.nak()
      this.handedBack++
    }
    if (this.handedBack > 0) {
      this.log.warn({ shard: this.shard, handedBack: this.handedBack }, 'drain deadline reached; unfinished messages handed back')
    }
  }
}
