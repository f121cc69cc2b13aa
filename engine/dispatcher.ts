import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream'
import type { Logger } from 'pino'
import type { Fate, MessageProcessor } from './process_message.ts'

const HANDBACK_RETRY_MS = 5_000 // an unexpected error: the message comes back in 5 s

/**
 * The pull loop of one shard: at most `capacity` messages in hand (the pull size and the in-flight bound
 * are the same number), each processed by the shard's actor. While a message is being processed its
 * ack_wait is extended with `working()` every third of ack_wait, so a slow SMTP server never makes
 * JetStream hand the message to someone else mid-transaction.
 */
export class ShardDispatcher {
  private messages?: ConsumerMessages
  private readonly inFlight = new Map<JsMsg, Promise<void>>()
  /** Messages whose fate was already given (normally, or handed back at the drain deadline). */
  private readonly settled = new WeakSet<JsMsg>()
  private slotFreed?: () => void
  private stopping = false
  private loop?: Promise<void>

  constructor (
    readonly shard: number,
    private readonly consumer: Consumer,
    private readonly processor: MessageProcessor,
    private readonly capacity: number,
    private readonly ackWaitMs: number,
    private readonly log: Logger
  ) {}

  async start (): Promise<void> {
    this.messages = await this.consumer.consume({ max_messages: this.capacity })
    this.loop = this.run(this.messages)
  }

  private async run (messages: ConsumerMessages): Promise<void> {
    for await (const m of messages) {
      while (this.inFlight.size >= this.capacity && !this.stopping) await new Promise<void>((resolve) => { this.slotFreed = resolve })
      if (this.stopping) {
        m.nak() // pulled but not started: hand it straight back
        continue
      }
      const p = this.handle(m).finally(() => {
        this.inFlight.delete(m)
        const wake = this.slotFreed
        this.slotFreed = undefined
        wake?.()
      })
      this.inFlight.set(m, p)
    }
  }

  private async handle (m: JsMsg): Promise<void> {
    const keepAlive = setInterval(() => m.working(), Math.max(500, Math.floor(this.ackWaitMs / 3)))
    let fate: Fate
    try {
      fate = await this.processor.process(this.shard, m.data)
    } catch (err) {
      this.log.error({ err, shard: this.shard, seq: m.seq }, 'message processing failed; handed back')
      fate = { kind: 'nak', delayMs: HANDBACK_RETRY_MS }
    } finally {
      clearInterval(keepAlive)
    }
    if (this.settled.has(m)) return // drained at the deadline and handed back already
    this.settled.add(m)
    if (fate.kind === 'ack') m.ack()
    else if (fate.kind === 'nak') m.nak(fate.delayMs)
    else {
      this.log.error({ shard: this.shard, seq: m.seq, reason: fate.reason }, 'outbound message terminated')
      m.term(fate.reason)
    }
  }

  /** Stops pulling, waits for messages in hand until `deadline`, then hands the rest back to JetStream. */
  async drain (deadline: number): Promise<void> {
    this.stopping = true
    this.messages?.stop()
    this.slotFreed?.() // a loop waiting for a slot goes on to hand back what it still holds
    await this.loop
    const all = Promise.all(this.inFlight.values())
    const left = deadline - Date.now()
    let timer: NodeJS.Timeout | undefined
    await Promise.race([all, new Promise((resolve) => { timer = setTimeout(resolve, Math.max(0, left)) })])
    clearTimeout(timer)
    for (const m of this.inFlight.keys()) {
      if (this.settled.has(m)) continue
      this.settled.add(m)
      m.nak()
    }
    if (this.inFlight.size > 0) this.log.warn({ shard: this.shard, handedBack: this.inFlight.size }, 'drain deadline reached; unfinished messages handed back')
  }
}
