/**
 * Per-destination concurrency and backoff, so that a destination that keeps answering 4xx can only spend its own
 * share of the engine (KumoMTA's ready queue with a connection limit, and its suspension of a failing site).
 * The destination is the recipient's domain. A real attempt at a destination that answers 4xx costs about as much
 * as a delivery (worker hand-off, MIME build, an SMTP transaction); a deferral without one costs a state write
 * and an event.
 *
 * - A destination that has not answered yet, or whose last answer was a 4xx or a failed connection, gets at most
 *   `unprovenConcurrency` attempts at once; further recipients wait in memory (up to MAX_WAIT_MS) for a slot or a
 *   verdict. So a burst to a new destination finds out how it answers before it spends the whole engine on it.
 * - After SUSPEND_AFTER transient failures in a row, with no 2xx or 5xx in between, it is suspended: a recipient
 *   whose turn in the retry schedule comes waits for the suspension's end (the caller decides what that costs it).
 *   When the suspension ends the destination is probed as an unproven one: up to `unprovenConcurrency` recipients
 *   go through at once, until the first verdict. A 2xx or 5xx ends the backoff; a 4xx suspends the destination
 *   again for twice as long, up to `maxMs`. Probing with more than one recipient matters for greylisting, where
 *   each recipient must come back on its own before it is accepted: with one probe per period, recipients would
 *   take their turns one period at a time.
 *
 * The table is per engine process and in memory: each process learns in a few transactions, and a restart
 * starts over with attempts. The clock and the jitter are injected.
 */
export const SUSPEND_AFTER = 5 // transient failures in a row: one greylisted or full mailbox is not a dead destination
const MAX_WAIT_MS = 1000 // longest in-memory wait for a slot; then the recipient comes back later, like a throttled one
const PROBE_STALE_MS = 600_000 // 10 min: a probe whose result never came back is forgotten
const FORGET_MS = 3600_000 // 1 h without an attempt: what a destination answered then says little about now
const PRUNE_EVERY = 1000 // outcomes recorded between two sweeps of forgotten destinations

export interface BackoffSettings {
  /** First suspension; doubled after each failed probe. */
  readonly firstMs: number
  readonly maxMs: number
  /** Attempts at once to a destination that has not answered yet or whose last answer was a failure. */
  readonly unprovenConcurrency: number
}

/** What an attempt's outcome says about its destination. */
export type AttemptVerdict = 'transient' | 'answered' | 'unknown'

/**
 * `busy`: the destination's capped attempts are all in flight, come back in `retryAfterMs`. `suspended`: no
 * attempt until `probeAt`; `lastResponse` is the destination's last 4xx.
 */
export type Admission =
  | { kind: 'attempt' }
  | { kind: 'busy', retryAfterMs: number }
  | { kind: 'suspended', probeAt: number, lastResponse: string }

interface Site {
  inFlight: number
  /** Transient failures since the last answer. */
  failures: number
  answered: boolean
  /** End of the current suspension; 0 while not suspended. */
  until: number
  backoffMs: number
  probeSince: number
  lastResponse: string
  seen: number
  waiters: Set<() => void>
}

export class DestinationBackoff {
  private readonly sites = new Map<string, Site>()
  private recorded = 0

  constructor (
    private readonly settings: BackoffSettings,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random
  ) {}

  /**
   * Whether a due recipient at `destination` may be attempted now. An attempt must be followed by exactly one
   * `record`. `wait: false` when the caller itself holds the slots it would wait for (more recipients of one
   * message at one destination): it is `busy` at once instead. `despiteSuspension`: a recipient that must have
   * its one real attempt now (it is about to give up untried) is held only by the destination's cap.
   */
  async admit (destination: string, wait = true, despiteSuspension = false): Promise<Admission> {
    const deadline = this.now() + MAX_WAIT_MS
    for (;;) {
      const s = this.site(destination)
      const a = this.decide(s, despiteSuspension)
      if (a !== 'wait') return a
      const left = deadline - this.now()
      if (!wait || left <= 0) return { kind: 'busy', retryAfterMs: MAX_WAIT_MS + Math.floor(this.random() * MAX_WAIT_MS / 2) }
      await new Promise<void>((resolve) => {
        const wake = (): void => { clearTimeout(timer); s.waiters.delete(wake); resolve() }
        const timer = setTimeout(wake, left)
        s.waiters.add(wake)
      })
    }
  }

  /** Learns from the outcome of an attempt that `admit` allowed; true when this outcome suspended the destination. */
  record (destination: string, verdict: AttemptVerdict, response = ''): boolean {
    if (++this.recorded % PRUNE_EVERY === 0) this.prune()
    const s = this.site(destination)
    s.inFlight = Math.max(0, s.inFlight - 1)
    s.seen = this.now()
    let suspended = false
    if (verdict === 'answered') {
      Object.assign(s, { failures: 0, answered: true, until: 0, backoffMs: 0, probeSince: 0 })
    } else if (verdict === 'unknown') {
      s.probeSince = 0
    } else {
      s.failures++
      s.lastResponse = response
      if (s.until === 0 && s.failures >= SUSPEND_AFTER) {
        s.backoffMs = this.settings.firstMs
        s.until = s.seen + s.backoffMs
        suspended = true
      } else if (s.until > 0 && s.probeSince > 0) {
        s.probeSince = 0
        s.backoffMs = Math.min(this.settings.maxMs, s.backoffMs * 2)
        s.until = s.seen + s.backoffMs
      }
      // a transaction admitted before the suspension that fails now changes nothing (while a probe is out it is
      // taken for the probe's failure: either way the destination still answers 4xx)
    }
    for (const wake of [...s.waiters]) wake()
    return suspended
  }

  /** How many destinations are suspended right now (for `outbox_destinations_suspended`). */
  suspendedCount (): number {
    const now = this.now()
    let n = 0
    for (const s of this.sites.values()) if (s.until > now) n++
    return n
  }

  /** Destinations suspended right now. */
  suspended (): string[] {
    return [...this.sites].filter(([, s]) => s.until > 0).map(([d]) => d)
  }

  private decide (s: Site, despiteSuspension: boolean): Admission | 'wait' {
    const now = this.now()
    if (s.until > now && !despiteSuspension) return { kind: 'suspended', probeAt: s.until, lastResponse: s.lastResponse }
    if (s.until > now) {
      if (s.inFlight >= this.settings.unprovenConcurrency) return 'wait'
    } else if (s.until > 0) {
      // the suspension is over: the probe lasts until the first verdict (a stale one, whose attempts never
      // reported back, is started again)
      if (s.probeSince > 0 && now - s.probeSince >= PROBE_STALE_MS) s.inFlight = 0
      if (s.probeSince === 0 || s.inFlight === 0) {
        s.probeSince = now
      } else if (s.inFlight >= this.settings.unprovenConcurrency) {
        return 'wait'
      }
    } else if ((!s.answered || s.failures > 0) && s.inFlight >= this.settings.unprovenConcurrency) {
      return 'wait'
    }
    s.inFlight++
    return { kind: 'attempt' }
  }

  private site (destination: string): Site {
    let s = this.sites.get(destination)
    if (s === undefined) {
      s = {
        inFlight: 0,
        failures: 0,
        answered: false,
        until: 0,
        backoffMs: 0,
        probeSince: 0,
        lastResponse: '',
        seen: this.now(),
        waiters: new Set()
      }
      this.sites.set(destination, s)
    }
    return s
  }

  private prune (): void {
    const now = this.now()
    for (const [d, s] of this.sites) {
      if (s.inFlight === 0 && s.waiters.size === 0 && now - s.seen > FORGET_MS + s.backoffMs) this.sites.delete(d)
    }
  }
}

/**
 * Settings that follow the retry schedule (the first suspension is its first step, the longest its longest, at
 * most an hour) and the SMTP pool (an unproven destination gets one pool's worth of connections).
 */
export function backoffSettings (retryScheduleS: readonly number[], poolConnections: number): BackoffSettings {
  const firstMs = Math.max(1000, (retryScheduleS[0] ?? 60) * 1000)
  const maxMs = Math.min(3600_000, Math.max(firstMs, ...retryScheduleS.map((s) => s * 1000)))
  return { firstMs, maxMs, unprovenConcurrency: poolConnections }
}
