import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { admissionLimitBytes } from '../../protocol/mod.ts'
import { isStreamNotFound } from './nats_errors.ts'

/** How often the streams' sizes are read: a send admitted meanwhile takes at most this long's worth of room. */
const ROOM_POLL_MS = 1000

/**
 * The room left below the admission limit (protocol/store_budget.ts: three quarters of `max_bytes`, the rest left
 * for what a killed NATS server brings back) of the fullest of `streams`; Infinity when none has a limit. A stream
 * that does not exist yet has room.
 */
export async function roomBelowAdmissionLimit (jsm: JetStreamManager, streams: readonly string[]): Promise<number> {
  const rooms = await Promise.all(streams.map(async (name) => {
    try {
      const { config, state } = await jsm.streams.info(name)
      return config.max_bytes > 0 ? admissionLimitBytes(config.max_bytes) - state.bytes : Infinity
    } catch (err) {
      if (isStreamNotFound(err)) return Infinity
      throw err
    }
  }))
  return Math.min(...rooms)
}

/** Whether `streams` are at their admission limit: less room below it than `headroomBytes`, the largest single write. */
export async function streamsAtAdmissionLimit (jsm: JetStreamManager, streams: readonly string[], headroomBytes: number): Promise<boolean> {
  return await roomBelowAdmissionLimit(jsm, streams) < headroomBytes
}

/**
 * The admission check of one process: `full` while any of `streams` is at its admission limit. The streams' sizes
 * are read once a second, so admission costs no round trip; what this process writes meanwhile (`noteWritten`)
 * counts against the room read, so one process never writes past the limit between two readings (several
 * processes together by at most a second of each other's writes). NATS not answering leaves the last reading (the
 * writes fail on their own then). Made and stopped by the process that admits the work.
 */
export class StreamRoomWatch {
  private room = Infinity
  private written = 0
  private timer: NodeJS.Timeout | undefined
  private reading = false
  private stopped = false
  private jsm?: JetStreamManager

  constructor (private readonly nc: NatsConnection, private readonly streams: readonly string[], private readonly headroomBytes: number,
    private readonly everyMs = ROOM_POLL_MS) {}

  /** No room below the limit for the largest single write (`headroomBytes`): what readiness reports. */
  get full (): boolean {
    return !this.hasRoomFor(this.headroomBytes)
  }

  /** Whether a write of `bytes` stays below the admission limit. */
  hasRoomFor (bytes: number): boolean {
    return this.written + bytes <= this.room
  }

  /** Bytes this process just wrote to one of the streams. */
  noteWritten (bytes: number): void {
    this.written += bytes
  }

  /** Reads once now (so a process starts knowing), then every `everyMs`. */
  async start (): Promise<this> {
    await this.read()
    if (this.stopped) return this
    this.timer = setInterval(() => { void this.read() }, this.everyMs)
    this.timer.unref()
    return this
  }

  stop (): void {
    this.stopped = true
    clearInterval(this.timer)
  }

  private async read (): Promise<void> {
    if (this.reading) return
    this.reading = true
    const writtenBefore = this.written
    try {
      this.jsm ??= await jetstreamManager(this.nc, { checkAPI: false })
      this.room = await roomBelowAdmissionLimit(this.jsm, this.streams)
      // what was written before the reading is in it; what was written while it was made may not be, and stays counted
      this.written -= writtenBefore
    } catch {
      // NATS unavailable: publishes fail on their own; the reading stays as it was
    } finally {
      this.reading = false
    }
  }
}
