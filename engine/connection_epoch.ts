import type { NatsConnection } from '@nats-io/transport-node'

/**
 * Skew allowed between the NATS server's clock (a message's publish time) and this host's (when the connection
 * came up): a message published this long after the connection came up is still treated as older than it.
 */
export const CLOCK_SKEW_MS = 5_000

/**
 * Whether a stream message handed out for the first time may have been handed out before all the same.
 *
 * JetStream's delivery count says so, except across a NATS server that was killed: nats-server 2.9 writes a
 * consumer's delivered and acknowledged state some moments after the fact, so a server restarted on its store can
 * hand out again, with a delivery count of 1, a message an engine already sent and acknowledged. Such a server
 * restart always drops this process's connection, and a process that started afterwards connected after it. So a
 * message published before the connection last came up (this process's start or its latest reconnect) may be a
 * repeat, and its delivery state is read first; a message published since is new for certain, as its count says.
 */
export class ConnectionEpoch {
  private since = Date.now()
  private stopped = false

  /** Follows the connection's reconnects until it closes. */
  constructor (nc: NatsConnection) {
    void this.follow(nc)
  }

  private async follow (nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (this.stopped) return
      if (s.type === 'reconnect') this.since = Date.now()
    }
  }

  /** `deliveryCount` and `publishedMs` are JetStream's for the stream message (its info's count and timestamp). */
  mayBeRepeat (deliveryCount: number, publishedMs: number): boolean {
    return deliveryCount > 1 || publishedMs <= this.since + CLOCK_SKEW_MS
  }

  stop (): void {
    this.stopped = true
  }
}
