import type { Logger } from 'pino'
import { QUEUED_FORMAT_VERSION } from '../../protocol/mod.ts'
import { nak, type Fate } from './fate.ts'

/** At most one log line per this long per process, however many newer messages come by. */
export const NEWER_FORMAT_LOG_EVERY_MS = 60_000 // 1 min

export interface NewerFormatDeps {
  /** How long a message waits before it is looked at again: the first delivery retry step (1 min by default). */
  delayMs: number
  log: Pick<Logger, 'warn'>
  /** `outbox_outbound_newer_format_total`. */
  counter: { inc: () => void }
  now?: () => number
}

/**
 * Messages of a newer queued-message format than this engine reads (a newer gateway wrote them during a rolling
 * upgrade, or engines were downgraded). Such a message is never ended or read further here: it is handed back
 * (`nak` with a delay) so that it is delivered once its shard is held by an engine that reads its format. The
 * hand-back touches no delivery state, so it spends no retry, and the outbound consumers deliver without limit
 * (`max_deliver` -1, protocol/jetstream_consumers.ts), so no count of hand-backs ever drops it. Each one is
 * counted; the log gets one line a minute at most, with how many were handed back since the last one.
 */
export class NewerFormatHandback {
  private lastLogAt = -Infinity
  private unlogged = 0
  private readonly now: () => number

  constructor (private readonly d: NewerFormatDeps) {
    this.now = d.now ?? Date.now
  }

  handBack (format: number, seq: number): Fate {
    this.d.counter.inc()
    this.unlogged++
    const now = this.now()
    if (now - this.lastLogAt >= NEWER_FORMAT_LOG_EVERY_MS) {
      this.d.log.warn({ format, readable_format: QUEUED_FORMAT_VERSION, seq, handed_back: this.unlogged, delay_ms: this.d.delayMs },
        'queued message of a newer format than this engine reads; handed back for a newer engine')
      this.lastLogAt = now
      this.unlogged = 0
    }
    return nak(this.d.delayMs)
  }
}
