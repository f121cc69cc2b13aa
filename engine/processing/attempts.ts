import type { Logger } from 'pino'
import { addressDomain, streamOf, type DomainRecord, type QueuedMessage } from '../../protocol/mod.ts'
import type { ControlPlane } from '../../stores/control_plane/mod.ts'
import type { OutboxMetrics } from '../../stores/metrics/mod.ts'
import type { DeliverTask, RecipientResult } from '../actor/task.ts'
import { DestinationBackoff, backoffSettings } from '../destination_backoff.ts'
import { sandboxOutcome, type SandboxResult } from '../sandbox.ts'
import type { ShardActors } from '../shards.ts'
import { signingDomain } from '../signing_keys.ts'
import { unadmittedResult } from './delivery_plan.ts'
import { verdictOf } from './outcomes.ts'
import type { EgressNote } from '../egress/egress_routes.ts'
import { reportRecovery } from '../egress/lane_recoveries.ts'
import { PoolResolver } from '../egress/pool_resolver.ts'

export interface AttemptDeps {
  /** The retry schedule (s) and the SMTP pool size, which size the destinations' backoff. */
  retryScheduleS: readonly number[]
  poolConnections: number
  /** Mail to MX hosts goes through the egress layer: each run carries its pool's sources. */
  egress: boolean
  publicUrl: string
  cp: ControlPlane
  actors: ShardActors
  log: Logger
  metrics: OutboxMetrics
}

/** A due recipient to attempt, and whether it was attempted before (see `DestinationBackoff.admit`). */
export interface SmtpAttempt {
  shard: number
  /** The message with its content rendered (rendered_content.ts `withContent`). */
  message: QueuedMessage
  domain: DomainRecord
  due: readonly string[]
  /** The message's retry span has passed. */
  overdue: boolean
  tried: (rcpt: string) => boolean
}

/** Simulated results of test recipients, with the engagement that follows each delivery. */
export interface SandboxAttempts { results: RecipientResult[], followUps: Map<string, SandboxResult['followUp']> }

/**
 * The attempts of due recipients: live ones through the destinations' backoff and the shard's thread (SMTP), test
 * ones simulated. Only the outcomes come back; what they mean is outcomes.ts's to say.
 */
export class DeliveryAttempts {
  /** One per process, shared by all its shards: a destination's mail is spread over every shard. */
  private readonly backoff: DestinationBackoff
  private signingKey?: DeliverTask['verpKey']
  private readonly pools?: PoolResolver

  constructor (private readonly d: AttemptDeps) {
    this.backoff = new DestinationBackoff(backoffSettings(d.retryScheduleS, d.poolConnections))
    if (d.egress) this.pools = new PoolResolver(d.cp)
    d.metrics.read('outbox_destinations_suspended', (set) => { set(this.backoff.suspendedCount()) })
  }

  /**
   * The attempt's pool from the control plane mirror as it is now, like the domain's and organisation's: the
   * stream's record (absent for transactional, and for a stream deleted since the mail was queued) may name one.
   */
  private egressOf (a: SmtpAttempt): NonNullable<DeliverTask['egress']> {
    const org = a.message.org_id
    return this.pools!.of(this.d.cp.orgs.get(org), a.domain, this.d.cp.streams.get(org, streamOf(a.message)))
  }

  /** Sandbox (test) recipients: nothing is sent, the address decides (sandbox.ts); `html` gives the simulated click. */
  sandbox (due: readonly string[], html: string | undefined): SandboxAttempts {
    const followUps = new Map<string, SandboxResult['followUp']>()
    const results = due.map((rcpt) => {
      const at = new Date().toISOString()
      const r = sandboxOutcome(rcpt, html, this.d.publicUrl, at)
      followUps.set(rcpt, r.followUp)
      return { rcpt, at, outcome: r.outcome }
    })
    return { results, followUps }
  }

  /**
   * Live recipients: those their destination's backoff admits are sent in one task to the shard's thread; the
   * others get their wait or deferral without an attempt. Every admitted attempt is reported back to the backoff,
   * an `unknown` verdict when the thread failed.
   */
  async smtp (a: SmtpAttempt): Promise<RecipientResult[]> {
    const { attempt, notAttempted } = await this.admit(a.due, a.overdue, a.tried)
    if (attempt.length === 0) return notAttempted
    const task: DeliverTask = {
      kind: 'deliver',
      shard: a.shard,
      message: a.message,
      recipients: attempt,
      domain: signingDomain(a.domain),
      verpKey: this.verpKey(),
      ...(this.pools !== undefined ? { egress: this.egressOf(a) } : {}),
      ...(this.pools !== undefined ? this.heldProviders() : {})
    }
    let sent: RecipientResult[]
    try {
      const attempted = await this.d.actors.deliver(a.shard, task)
      sent = attempted.results
      for (const n of attempted.egress ?? []) this.laneChanged(n)
      for (const r of attempted.recovered ?? []) reportRecovery(this.d.metrics, this.d.log, r)
      for (const u of attempted.unrecorded ?? []) {
        this.d.log.warn({ message_id: a.message.id, recipient: u.rcpt, code: u.code },
          'SMTP reply not recorded when it arrived; a crash before the delivery state is saved would send again')
      }
    } catch (err) {
      for (const r of attempt) this.backoff.record(addressDomain(r), 'unknown')
      throw err
    }
    for (const r of sent) {
      const dest = addressDomain(r.rcpt)
      const response = r.outcome.kind === 'deferred' ? r.outcome.response : ''
      if (this.backoff.record(dest, verdictOf(r.outcome), response)) {
        this.d.metrics.destinationSuspensions.inc()
        this.d.log.warn({ destination: dest, response }, 'destination answers only 4xx; attempts suspended')
      }
    }
    return [...notAttempted, ...sent]
  }

  /**
   * Splits due recipients by their destination's backoff. A recipient at a suspended destination waits for the
   * destination's next probe like a throttled one: no event, no attempt used up, since no answer can change before
   * then. Once the message's span has passed (`overdue`), one that was really attempted before gives up at such a
   * turn, with the destination's last reply, and one never attempted gets its one real attempt despite the
   * suspension (within the destination's cap), so that no recipient waits for probes for ever and none gives up
   * untried. One at a destination still busy with its capped attempts waits too.
   */
  private async admit (due: readonly string[], overdue: boolean, tried: (rcpt: string) => boolean):
  Promise<{ attempt: string[], notAttempted: RecipientResult[] }> {
    const attempt: string[] = []
    const notAttempted: RecipientResult[] = []
    const taken = new Set<string>()
    for (const rcpt of due) {
      const dest = addressDomain(rcpt)
      // a second recipient at one destination must not wait for the slot the first one holds
      const a = await this.backoff.admit(dest, !taken.has(dest), overdue && !tried(rcpt))
      if (a.kind === 'attempt') {
        attempt.push(rcpt)
        taken.add(dest)
      } else {
        notAttempted.push(unadmittedResult(rcpt, a, overdue, new Date().toISOString()))
      }
    }
    return { attempt, notAttempted }
  }

  /** The providers an operator holds, for the thread to hold their recipients before any lane counts them. */
  private heldProviders (): Pick<DeliverTask, 'heldProviders'> {
    const held = this.d.cp.queues.heldProviders()
    return held.length > 0 ? { heldProviders: held } : {}
  }

  /** A reply slowed, paused or took out an egress lane: one metric and one log line per change. */
  private laneChanged (n: EgressNote): void {
    this.d.metrics.egressLaneChanges[n.action].inc()
    const t = n.throttle
    this.d.log.warn({
      source: n.source, provider: n.provider, rule: n.rule, action: n.action, rate_factor: t.factor,
      ...(t.pausedUntil > 0 ? { paused_until: new Date(t.pausedUntil).toISOString() } : {}),
      ...(t.outUntil > 0 ? { out_until: new Date(t.outUntil).toISOString() } : {})
    }, 'egress lane throttled by a reply')
  }

  /**
   * The newest return-path key, as plain data for the shard's thread (a copy of its own: a pooled Buffer would take
   * its whole 8 KB pool across the thread boundary).
   */
  private verpKey (): DeliverTask['verpKey'] {
    const k = this.d.cp.verpKeys.signing()
    if (this.signingKey?.id !== k.id) this.signingKey = { id: k.id, secret: new Uint8Array(k.secret) }
    return this.signingKey
  }
}
