import type { Redis } from 'ioredis'

/** How often a client through Sentinel checks that its master answers: 1 s. */
export const MASTER_CHECK_EVERY_MS = 1000
/** How long a master may leave every check unanswered before the client gives up on it: 3 s. */
export const MASTER_SILENT_MS = 3000

/**
 * ioredis reconnects — and, through Sentinel, asks the sentinels for the master again — only when its socket
 * closes or a write is refused with READONLY. A master cut off from the network, or whose machine is lost without
 * a reset, closes nothing: every command times out on the old connection until TCP gives up (about 15 minutes),
 * long after the sentinels promoted a replica. So while the client is connected it PINGs every second, and when
 * no answer has come for `silentMs` it drops the connection and reconnects through the sentinels.
 */
export function watchMaster (redis: Redis, everyMs = MASTER_CHECK_EVERY_MS, silentMs = MASTER_SILENT_MS): void {
  let answeredAt = Date.now()
  redis.on('ready', () => { answeredAt = Date.now() })
  const timer = setInterval(() => {
    if (redis.status !== 'ready') return
    if (Date.now() - answeredAt > silentMs) {
      answeredAt = Date.now()
      redis.disconnect(true)
      return
    }
    redis.ping().then(() => { answeredAt = Date.now() }, () => {})
  }, everyMs)
  timer.unref()
  redis.once('end', () => { clearInterval(timer) })
}
