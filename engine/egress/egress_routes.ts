import { providerOf, replyAction } from '../../protocol/mod.ts'
import type { EgressState, LaneThrottle } from '../../stores/egress/mod.ts'
import type { RecipientOutcome } from '../actor/classify.ts'
import type { MailHost, MxResolver } from '../actor/mx.ts'
import type { Destination } from '../actor/transports.ts'
import type { LaneSockets } from './lane_sockets.ts'
import type { EgressRouter, WaitReason } from './router.ts'
import type { TaskEgress, TaskSource } from './task_egress.ts'

const MAX_MX_TRIED = 3
/** A send refused for want of a connection slot comes back this long later (a slot frees as a message ends). */
export const BUSY_RETRY_MS = 1000

/**
 * The lane a recipient's mail took: where a reply that speaks of the source is taken into account. `perMinute` and
 * `warmupCounted` say what the router counted for it, to give back when the message does not go after all.
 */
export interface LaneRef { lane: string, source: string, provider: string, perMinute: number, warmupCounted: boolean }

/** What the thread tells the main thread about a lane whose state a reply changed: one metric and one log line each. */
export interface EgressNote {
  lane: string
  source: string
  provider: string
  rule: string
  action: 'slow' | 'pause' | 'out'
  throttle: LaneThrottle
}

export type EgressRoute =
  | { kind: 'go', dests: Destination[], lane: LaneRef }
  | { kind: 'wait', ms: number, reason: WaitReason, provider: string }
  /** An operator holds the provider (engine/queue_holds.ts): nothing was counted against any lane. */
  | { kind: 'held', provider: string }

/**
 * The egress of mail to MX hosts, in the shard's thread: the recipient's provider from its domain's MX hosts, a
 * source of the message's pool for it (EgressRouter), and the destinations to try from that source, each pool of
 * connections bound to the source's address, saying its EHLO name, within the lane's limits and holding
 * cluster-wide slots for its connections (LaneSockets). After the reply, a reply rule may slow, pause or take out
 * the lane; such a reply speaks of the source, not of the recipient, so it never bounces the recipient.
 */
export class EgressRoutes {
  constructor (
    private readonly mx: MxResolver,
    private readonly state: EgressState,
    private readonly sockets: LaneSockets,
    private readonly router: EgressRouter,
    private readonly port: number
  ) {}

  /** The provider of each MX answer, kept as long as the answer is (the resolver hands out its cached list). */
  private readonly providers = new WeakMap<readonly MailHost[], string>()

  private providerOf (hosts: readonly MailHost[], domain: string): string {
    let p = this.providers.get(hosts)
    if (p === undefined) this.providers.set(hosts, p = providerOf(hosts.map((h) => h.host), domain))
    return p
  }

  /** Throws the MX look-up's errors (MxLookupError), which classify as today. `held`: providers an operator holds. */
  async route (domain: string, egress: TaskEgress, messageId: string, held?: readonly string[]): Promise<EgressRoute> {
    const named = await this.mx.route(domain)
    const provider = this.providerOf(named, domain)
    if (held !== undefined && held.includes(provider)) return { kind: 'held', provider }
    const exclude = new Set<string>()
    for (;;) {
      const pick = await this.router.pick(provider, egress, exclude)
      if (pick.kind === 'wait') {
        void this.state.noteWaiting(pick.lane, messageId)
        return { kind: 'wait', ms: pick.ms, reason: pick.reason, provider }
      }
      // The host's own look-up (A first) already is an IPv4 source's when every host has an IPv4 address
      const hosts = pick.source.address === undefined || (pick.source.family === 4 && named.every((h) => h.family === 4))
        ? named
        : await this.hostsFor(domain, pick.source.family)
      if (hosts === undefined) { exclude.add(pick.source.name); continue } // no MX host of this source's family
      void this.state.clearWaiting(pick.lane, messageId)
      const lane = {
        lane: pick.lane, source: pick.source.name, provider, perMinute: pick.limits.messagesPerMinute, warmupCounted: pick.warmupCounted
      }
      return { kind: 'go', lane, dests: hosts.slice(0, MAX_MX_TRIED).map((h) => this.destination(h, pick.source, pick.lane, pick.limits)) }
    }
  }

  /** The hosts a bound source of `family` can reach; undefined when the domain has hosts of the other family only. */
  private async hostsFor (domain: string, family: 4 | 6): Promise<MailHost[] | undefined> {
    try {
      return await this.mx.route(domain, family)
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOHOSTFORFAMILY') return undefined
      throw err
    }
  }

  private destination (h: MailHost, source: TaskSource, lane: string,
    limits: { maxConnections: number, messagesPerConnection: number, tls: 'opportunistic' | 'required' }): Destination {
    return {
      host: h.host,
      connectTo: h.ip,
      port: this.port,
      secure: false,
      family: h.family,
      lane,
      maxConnections: limits.maxConnections,
      maxMessages: limits.messagesPerConnection,
      requireTLS: limits.tls === 'required',
      ...(source.address !== undefined ? { localAddress: source.address } : {}),
      ...(source.ehlo !== undefined ? { ehlo: source.ehlo } : {}),
      getSocket: this.sockets.hook(lane, limits.maxConnections, source.address, h.family)
    }
  }

  /**
   * Gives back what the router counted for a message that did not go: no connection slot of the lane was free in
   * the cluster (EgressBusyError). Without it, threads that find the lane's connections held by another thread
   * would spend the lane's rate and the source's warm-up on messages never sent.
   */
  async notSent (lane: LaneRef): Promise<void> {
    await this.state.refundSend(lane.lane, lane.perMinute)
    if (lane.warmupCounted) await this.state.refundWarmup(lane.source, lane.provider)
  }

  /**
   * A reply one of the reply rules knows speaks of the source: the lane is slowed, paused or taken out (once per
   * change, noted for the main thread), and the recipient is deferred whatever the reply's class, to be sent again,
   * from this source once the lane allows or from another of the pool.
   */
  async afterReply (lane: LaneRef, outcome: RecipientOutcome, notes: EgressNote[]): Promise<RecipientOutcome> {
    const reply = outcome.kind === 'deferred'
      ? outcome.response
      : outcome.kind === 'bounced' ? `${outcome.code} ${outcome.message}` : undefined
    if (reply === undefined) return outcome
    const matched = replyAction(lane.provider, reply)
    if (matched === undefined) return outcome
    const after = await this.state.applyReply(lane.lane, matched.action, matched.rule)
    if (after.changed) notes.push({ ...lane, rule: matched.rule, action: matched.action.kind, throttle: after.throttle })
    return outcome.kind === 'deferred' ? outcome : { kind: 'deferred', response: reply }
  }
}
