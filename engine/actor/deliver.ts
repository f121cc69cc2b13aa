import { createPrivateKey, type KeyObject } from 'node:crypto'
import { addressDomain, trackingBaseUrl } from '../../protocol/mod.ts'
import { classifyAccepted, classifyError, tryNextHost, type RecipientOutcome } from './classify.ts'
import { ComposedMessage, type Content, type RecipientMail } from './compose.ts'
import { SubmittedMessage } from './raw_submission.ts'
import { MxResolver } from './mx.ts'
import type { DestinationThrottle } from './throttle.ts'
import { relayDestination, type Destination, type SentInfo, type TransportCache } from './transports.ts'
import type { ActorSettings, DeliverResult, DeliverTask, RecipientResult, SmtpAttemptSample, UnrecordedReply } from './task.ts'
import { destinationClass, type DestinationClass } from '../../stores/metrics/mod.ts'
import type { Redis } from 'ioredis'
import { DeliveryStateChanges, DeliveryStateWriter } from '../delivery_state_layout.ts'
import { EgressState, type LaneRecovery } from '../../stores/egress/mod.ts'
import { BUSY_RETRY_MS, EgressRoutes, type EgressNote, type LaneRef } from '../egress/egress_routes.ts'
import { HOLD_RECHECK_MS } from '../../protocol/mod.ts'
import { EgressBusyError, LaneSockets } from '../egress/lane_sockets.ts'
import { EgressRouter } from '../egress/router.ts'
import { StsDelivery, type StsPlan } from '../tls/sts_delivery.ts'
import { StsPolicies } from '../tls/sts_policies.ts'
import { TLS_FAILURE_TEXT, tlsFailureType, trustedCas, type TlsResultType } from '../tls/outbound_tls.ts'
import { TlsCounterBatch } from '../../stores/tls_reports/mod.ts'
import { FencedSends } from './fenced_sends.ts'

const MAX_MX_TRIED = 3
const MAX_CLASSED_HOSTS = 10_000
/** Claimed recovery steps kept for the next task's result; a lane claims at most six per slow, so this is never reached. */
const MAX_PENDING_RECOVERIES = 10_000
const MOVED: RecipientOutcome = Object.freeze({ kind: 'moved' })

/**
 * A stable code for a failed Redis command: the socket's (`ECONNREFUSED`, `ECONNRESET`…), else the kind of a
 * Redis error reply, which RESP defines as its first word (`WRONGTYPE`, `OOM`, `READONLY`, `NOSCRIPT`), else the
 * error's name (ioredis reports a command timeout as a plain `Error`).
 */
export function redisErrorCode (err: unknown): string {
  if (!(err instanceof Error)) return 'unknown'
  const code = (err as NodeJS.ErrnoException).code
  if (typeof code === 'string') return code
  if (err.name === 'ReplyError') return /^[A-Z]+/.exec(err.message)?.[0] ?? err.name
  return err.name
}

/**
 * One delivery attempt of one message inside a shard's thread (its content rendered already): per recipient route → throttle →
 * compose once per message, per recipient splice and sign (DKIM), SMTP → classify. Never throws: every recipient ends with an outcome.
 */
export class Deliverer {
  private readonly mx: MxResolver
  private readonly relay?: Destination
  private readonly keys = new Map<string, { pem: string, key: KeyObject }>()
  /** MX host → destination class (metrics); bounded like any per-host cache. */
  private readonly classes = new Map<string, DestinationClass>()
  private readonly secret: Buffer
  /** The return-path key of the last task; a new one arrives only when the keys rotate. */
  private verpKey?: { id: string, secret: Buffer }
  private readonly state: DeliveryStateWriter
  private readonly egress?: EgressRoutes
  private readonly sockets?: LaneSockets
  /** MTA-STS and TLS-RPT for mail to MX hosts; none through the relay (the relay's own TLS is the relay's to choose). */
  private readonly sts?: StsDelivery
  private readonly counters?: TlsCounterBatch
  /**
   * Recovery steps this thread's gates claimed (once across the cluster), for the main thread to log and count: they
   * go back with the next task that ends, which is at latest the one whose gate claimed them.
   */
  private recoveries: LaneRecovery[] = []
  /** Each transaction held to its shard's lease (engine/leases/fences.ts). */
  private readonly fenced: FencedSends

  constructor (
    private readonly settings: ActorSettings, private readonly transports: TransportCache, private readonly throttle: DestinationThrottle,
    redis: Redis
  ) {
    this.mx = new MxResolver(settings.dnsServers, settings.allowPrivate)
    if (settings.relay !== undefined) this.relay = relayDestination(settings.relay, settings.relayTls)
    else {
      this.counters = new TlsCounterBatch(redis)
      const policies = new StsPolicies({
        dnsServers: settings.dnsServers, allowPrivate: settings.allowPrivate, ca: trustedCas(settings.caPem), port: settings.stsPort
      })
      this.sts = new StsDelivery(policies, this.counters)
    }
    this.secret = Buffer.from(settings.secret)
    this.state = new DeliveryStateWriter(redis)
    this.fenced = new FencedSends(settings.fences, transports, settings.stalledAfterMs)
    // Mail through the relay is the relay's to shape; with shaping off, mail to MX hosts goes as it did before it.
    if (settings.egressShaping && this.relay === undefined) {
      const egress = new EgressState(redis, Date.now, {
        ...(settings.egressRecoverEveryMs !== undefined ? { recoverEveryMs: settings.egressRecoverEveryMs } : {}),
        onRecovery: (r) => { if (this.recoveries.length < MAX_PENDING_RECOVERIES) this.recoveries.push(r) }
      })
      this.sockets = new LaneSockets(egress, settings.egressConnectionHoldMs)
      this.egress = new EgressRoutes(this.mx, egress, this.sockets, new EgressRouter(egress), settings.outboundPort)
    }
  }

  /** Stops renewing connection slots (the pools' close gives them back). */
  async close (): Promise<void> {
    this.fenced.close()
    this.sockets?.close()
    await this.counters?.flush()
  }

  async run (task: DeliverTask): Promise<DeliverResult> {
    if (this.verpKey?.id !== task.verpKey.id) this.verpKey = { id: task.verpKey.id, secret: Buffer.from(task.verpKey.secret) }
    let message: ComposedMessage | SubmittedMessage
    try {
      const content: Content = task.message
      const domain = task.domain
      const dkim = [{ domain: domain.name, selector: domain.selector, key: this.dkimKey(domain.id, domain.selector, domain.privateKey) }]
      const ed = domain.ed25519
      if (ed !== undefined) {
        dkim.push({ domain: domain.name, selector: ed.selector, key: this.dkimKey(domain.id, ed.selector, ed.privateKey) })
      }
      // The message carries the domain's own tracking host when it had a verified one at acceptance: no look-up here.
      const publicUrl = trackingBaseUrl(this.settings.publicUrl, task.message.tracking_host)
      const ctx = { publicUrl, secret: this.secret, domain: domain.name, dkim, verpKey: this.verpKey }
      const submitted = task.message.submitted
      message = submitted !== undefined
        ? new SubmittedMessage(task.message, submitted.raw, ctx)
        : new ComposedMessage(task.message, content, ctx)
    } catch (err) {
      const at = new Date().toISOString()
      return {
        results: task.recipients.map((rcpt) => ({
          rcpt, at, outcome: { kind: 'failed', category: 'unbuildable', reason: (err as Error).message }
        }))
      }
    }
    const unrecorded: UnrecordedReply[] = []
    const attempts: SmtpAttemptSample[] = []
    const notes: EgressNote[] = []
    const providers = new Map<string, string>()
    const results = await Promise.all(task.recipients.map(async (rcpt): Promise<RecipientResult> => {
      const outcome = await this.one(message, rcpt, attempts, task, notes, providers)
      const provider = providers.get(rcpt)
      const result = { rcpt, outcome, at: new Date().toISOString(), ...(provider !== undefined ? { provider } : {}) }
      if (outcome.kind === 'delivered' || outcome.kind === 'bounced') {
        const code = await this.recordSent(task.message.id, result)
        if (code !== undefined) unrecorded.push({ rcpt, code })
      }
      return result
    }))
    const recovered = this.recoveries
    if (recovered.length > 0) this.recoveries = []
    return {
      results,
      attempts,
      ...(unrecorded.length > 0 ? { unrecorded } : {}),
      ...(notes.length > 0 ? { egress: notes } : {}),
      ...(recovered.length > 0 ? { recovered } : {})
    }
  }

  private async one (message: ComposedMessage | SubmittedMessage, rcpt: string, attempts: SmtpAttemptSample[], task: DeliverTask,
    notes: EgressNote[], providers: Map<string, string>): Promise<RecipientOutcome> {
    let dests: Destination[]
    let lane: LaneRef | undefined
    let plan: StsPlan | undefined
    const domain = addressDomain(rcpt)
    // the policy look-up runs beside the MX one; both answer from their caches almost always
    const policy = this.sts?.lookup(domain)
    try {
      if (this.relay !== undefined) dests = [this.relay]
      else if (this.egress !== undefined && task.egress !== undefined) {
        const route = await this.egress.route(domain, task.egress, task.message.id, task.heldProviders)
        providers.set(rcpt, route.kind === 'go' ? route.lane.provider : route.provider)
        // an operator's hold of the provider: the recipient waits for the hold's next look, no attempt counted
        if (route.kind === 'held') return { kind: 'throttled', retryAfterMs: HOLD_RECHECK_MS }
        if (route.kind === 'wait') return { kind: 'throttled', retryAfterMs: route.ms }
        dests = route.dests
        lane = route.lane
      } else dests = await this.mxDestinations(domain)
    } catch (err) {
      return classifyError(err as Error)
    }
    if (policy !== undefined) {
      plan = this.sts!.plan(domain, await policy, dests)
      if (plan.blocked !== undefined) {
        if (lane !== undefined) await this.egress!.notSent(lane)
        return { kind: 'deferred', response: plan.blocked }
      }
      dests = plan.dests
    }
    let outcome: RecipientOutcome = { kind: 'deferred', response: 'no mail host tried' }
    // built and signed once, whichever host takes it
    let mail: RecipientMail | undefined
    for (let i = 0; i < dests.length; i++) {
      const dest = dests[i]!
      let sentAt = 0
      try {
        const wait = await this.throttle.check(dest.host)
        if (wait > 0) return { kind: 'throttled', retryAfterMs: wait }
        mail ??= message.forRecipient(rcpt)
        // the last moment to find the shard gone: a message held up past its lease (a cut link, a frozen process) is not sent
        if (!this.fenced.mayStart(task.shard)) {
          if (lane !== undefined) await this.egress!.notSent(lane)
          return MOVED
        }
        sentAt = performance.now()
        const info = await this.send(dest, mail, plan, task.shard)
        // one envelope recipient per transaction: resolving means it was accepted
        return this.measured(attempts, dest, sentAt, classifyAccepted(info))
      } catch (err) {
        // every connection of the lane is open elsewhere in the cluster: not an attempt, the lane's rate given back
        // (whether or not the shard has moved since), the recipient waits
        if (err instanceof EgressBusyError) {
          if (lane !== undefined) await this.egress!.notSent(lane)
          return this.fenced.mayStart(task.shard) ? { kind: 'throttled', retryAfterMs: BUSY_RETRY_MS } : MOVED
        }
        // it failed after the shard moved (reset as stalled, or any other failure): its retry is the new owner's to make
        if (sentAt > 0 && !this.fenced.mayStart(task.shard)) return MOVED
        // (a `testing` host's second, unverified, try failing is an ordinary failure)
        const tls = dest.tlsVerify === true && plan?.fallback.has(dest) !== true ? tlsFailureType(err as Error) : undefined
        if (tls !== undefined) {
          // our own refusal to go on without verified TLS, not the server's reply about the sender: the next host is tried
          outcome = { kind: 'deferred', response: this.tlsRefusal(dest, plan, tls, err as Error) }
          if (sentAt > 0) this.measured(attempts, dest, sentAt, outcome)
          continue
        }
        outcome = classifyError(err as Error)
        if (lane !== undefined) outcome = await this.egress!.afterReply(lane, outcome, notes)
        if (sentAt > 0) this.measured(attempts, dest, sentAt, outcome)
        if (!tryNextHost(err as Error)) return outcome
      }
    }
    return outcome
  }

  /**
   * One SMTP transaction with a host. Under an MTA-STS policy a verified session is counted for TLS-RPT; in
   * `testing` mode a host whose verified session fails TLS gets the message again as without a policy (the failure
   * is only reported).
   */
  private async send (dest: Destination, mail: RecipientMail, plan: StsPlan | undefined, shard: number): Promise<SentInfo> {
    if (plan === undefined || dest.tlsVerify !== true) return await this.fenced.send(this.transports.get(dest), mail, shard)
    try {
      const info = await this.fenced.send(this.transports.get(dest), mail, shard)
      this.sts!.ok(plan, dest)
      return info
    } catch (err) {
      const tls = tlsFailureType(err as Error)
      if (tls === undefined || !plan.fallback.has(dest)) throw err
      this.sts!.failed(plan, dest, tls, (err as Error).message)
      if (!this.fenced.mayStart(shard)) throw err
      return await this.fenced.send(this.transports.get({ ...dest, tlsVerify: false }), mail, shard)
    }
  }

  /** The reason a recipient waits when a session that must be verified TLS was not. */
  private tlsRefusal (dest: Destination, plan: StsPlan | undefined, type: TlsResultType, err: Error): string {
    if (plan !== undefined) return this.sts!.failed(plan, dest, type, err.message)
    return `relay ${dest.host}: ${TLS_FAILURE_TEXT[type]} (${err.message}); nothing sent, credentials withheld ` +
      '(OB_SMTP_RELAY_TLS=verify)'
  }

  /** Notes one SMTP transaction for the main thread's metrics; the class of a host is worked out once. */
  private measured (attempts: SmtpAttemptSample[], dest: Destination, sentAt: number, outcome: RecipientOutcome): RecipientOutcome {
    let destination = this.relay !== undefined ? 'relay' : this.classes.get(dest.host)
    if (destination === undefined) {
      if (this.classes.size >= MAX_CLASSED_HOSTS) this.classes.clear()
      this.classes.set(dest.host, destination = destinationClass(dest.host))
    }
    if (outcome.kind !== 'throttled' && outcome.kind !== 'moved') {
      attempts.push({ destination, result: outcome.kind, seconds: (performance.now() - sentAt) / 1000 })
    }
    return outcome
  }

  /**
   * Writes the final SMTP reply of a recipient to the message's delivery state the moment it arrives, from
   * this thread, so that a crash right after the remote 250 finds it and does not send again. Only a crash
   * between the 250 and this write (one Redis round trip) can still repeat a delivery. A failed write does not
   * change the outcome (the main thread records it again with the final events); it only widens that window
   * until then, so it is reported: the code of the failure, for the main thread to log. The replies arriving in
   * one turn of the thread's event loop are written together (DeliveryStateWriter), each write atomic.
   */
  private async recordSent (messageId: string, result: RecipientResult): Promise<string | undefined> {
    const err = await this.state.write(messageId, new DeliveryStateChanges().sent(result))
    return err === undefined ? undefined : redisErrorCode(err)
  }

  /**
   * Up to MAX_MX_TRIED hosts in preference order; the next is tried only when no server answered. `family`: that of
   * the source sending (unset: the host's own address, which reaches an IPv6-only host over IPv6).
   */
  private async mxDestinations (domain: string, family?: 4 | 6): Promise<Destination[]> {
    const hosts = await this.mx.route(domain, family)
    return hosts.slice(0, MAX_MX_TRIED).map((h) => ({
      host: h.host, connectTo: h.ip, port: this.settings.outboundPort, secure: false, family: h.family
    }))
  }

  private dkimKey (domainId: string, selector: string, privateKey: string): KeyObject {
    const id = `${domainId}:${selector}`
    let cached = this.keys.get(id)
    // a selector keeps its key, but compare anyway (cheaper than parsing): a key replaced under the same selector
    // must never sign with the old one
    if (cached?.pem !== privateKey) {
      // parsing the PEM costs ~0.1 ms; a KeyObject is reused for every signature of the domain
      cached = { pem: privateKey, key: createPrivateKey(privateKey) }
      this.keys.set(id, cached)
    }
    return cached.key
  }
}
