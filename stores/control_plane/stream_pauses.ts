import { STREAM_PAUSE_KEYS, type StreamPauseRecord } from '../../protocol/mod.ts'
import { KvConflictError, type KvMirror } from './kv_mirror.ts'

const isPause = (v: unknown): v is StreamPauseRecord => (v as StreamPauseRecord | undefined)?.kind === 'stream_pause'

/**
 * Paused streams (protocol/reputation.ts), in the `ob_egress` bucket under `pause.` keys, mirrored in every process:
 * a gateway's check per send is a map look-up, with no round trip, and a pause or resume reaches every gateway through
 * the bucket's watch. Every write goes through this class: the reputation guard pauses, an admin or the operator resumes.
 */
export class StreamPauses {
  constructor (private readonly mirror: KvMirror<unknown>) {}

  paused (org: string, stream: string): StreamPauseRecord | undefined {
    const v = this.mirror.get(STREAM_PAUSE_KEYS.pause(org, stream))
    return isPause(v) ? v : undefined
  }

  /** Every paused stream of every organisation (for the metrics). */
  all (): StreamPauseRecord[] {
    return this.mirror.list(STREAM_PAUSE_KEYS.prefix).filter(isPause)
  }

  /** The organisation's paused streams, oldest pause first. */
  list (org: string): StreamPauseRecord[] {
    return this.mirror.list(STREAM_PAUSE_KEYS.orgPrefix(org)).filter(isPause).sort((a, b) => a.paused_at.localeCompare(b.paused_at))
  }

  /**
   * Pauses the stream; resolves true when this call paused it. Create-only, so of several engines that see the window
   * trip at once exactly one pauses it (and publishes `stream.paused`).
   */
  async pause (record: StreamPauseRecord): Promise<boolean> {
    try {
      await this.mirror.create(STREAM_PAUSE_KEYS.pause(record.org_id, record.stream), record)
      return true
    } catch (err) {
      if (err instanceof KvConflictError) return false
      throw err
    }
  }

  /**
   * Takes back the pause `record` as it was made, and only that one: the reputation guard's, when its `stream.paused`
   * could not be published, so no stream is left paused without the organisation being told.
   */
  async withdraw (record: StreamPauseRecord): Promise<void> {
    const key = STREAM_PAUSE_KEYS.pause(record.org_id, record.stream)
    const cur = this.mirror.get(key)
    const revision = this.mirror.revision(key)
    if (!isPause(cur) || cur.paused_at !== record.paused_at || revision === undefined) return
    // returns once this process's mirror shows the stream running, as a resume does: the next outcome it counts can
    // pause the stream again, instead of finding the withdrawn pause still there
    if (await this.mirror.deleteIfUnchanged(key, revision)) await this.mirror.sync(2000)
  }

  /** Ends a pause; resolves the pause it ended, or undefined when the stream was not paused. */
  async resume (org: string, stream: string): Promise<StreamPauseRecord | undefined> {
    const key = STREAM_PAUSE_KEYS.pause(org, stream)
    const cur = this.mirror.get(key)
    if (!isPause(cur)) return undefined
    const revision = this.mirror.revision(key)
    if (revision === undefined || !await this.mirror.deleteIfUnchanged(key, revision)) return undefined
    // the answer waits until this process's mirror shows the stream running, so the next send is taken
    await this.mirror.sync(2000)
    return cur
  }
}
