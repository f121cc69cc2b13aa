import { jetstreamManager } from '@nats-io/jetstream'
import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { DEFAULT_NATS_STORE_MB } from '../../config/mod.ts'
import { JsPublisher, ensureStoreShare } from '../clients/mod.ts'
import {
  KV_BUCKETS, kvBucketOptions, kvShareBytes, type ApiKeyRecord, type DomainRecord, type OperatorKeyRecord, type OrgRecord,
  type RouteRecord, type StreamRecord, type SuppressionRecord, type TemplateRecord, type WebhookRecord, sha256Hex, erasedAddressKey,
  isBroadcast, installationSecret, EVENTS_MAX_AGE_MS
} from '../../protocol/mod.ts'
import { KvMirror } from './kv_mirror.ts'
import { VerpKeyRing, type VerpKeyRecord } from './verp_keys.ts'
import { OperatorKeys } from './operator_keys.ts'
import { EgressConfig, type EgressEntry } from './egress_config.ts'
import { Organizations } from './organizations.ts'
import { QueueControls } from './queue_holds.ts'
import { StreamPauses } from './stream_pauses.ts'
import { SuppressionList, suppressionKey } from './suppression_list.ts'
import { MessageStreams } from './message_streams.ts'
import type { QueueControlRecord } from '../../protocol/mod.ts'

/**
 * Organisations, domains, keys, webhooks, templates, inbound routes, suppressions, return-path keys, operator keys and
 * the operator's egress configuration, stored in NATS KV
 * (replicated in a cluster) and mirrored in every process. Keys of org-owned records are `<org_id>.<id>`.
 */
/** How many presented key values' digests a process remembers. */
const PRESENTED_KEY_HASHES = 10_000
const DAY_MS = 24 * 3600_000

export class ControlPlane {
  private readonly presentedKeyHashes = new Map<string, string>()

  private constructor (
    readonly orgs: KvMirror<OrgRecord>,
    readonly domains: KvMirror<DomainRecord>,
    /**
     * domain name → `<org_id>.<domain_id>` of the claim that verified it (or is verifying it right now). Pending
     * claims are not in it: several organisations may claim one name, and the first to verify takes the entry.
     */
    readonly domainNames: KvMirror<string>,
    readonly apiKeys: KvMirror<ApiKeyRecord>,
    readonly webhooks: KvMirror<WebhookRecord>,
    readonly templates: KvMirror<TemplateRecord>,
    readonly routes: KvMirror<RouteRecord>,
    readonly suppressions: KvMirror<SuppressionRecord>,
    readonly settings: KV,
    private readonly verpKeyMirror: KvMirror<VerpKeyRecord>,
    private readonly operatorKeyMirror: KvMirror<OperatorKeyRecord>,
    private readonly egressMirror: KvMirror<EgressEntry>,
    erasedKey: Buffer,
    private readonly streamMirror: KvMirror<StreamRecord>,
    /** The suppression list's bulk writes (an import); closed with the control plane. */
    private readonly suppressionWriter: JsPublisher
  ) {
    this.verpKeys = new VerpKeyRing(verpKeyMirror)
    this.operatorKeys = new OperatorKeys(operatorKeyMirror)
    this.organizations = new Organizations(orgs)
    this.streams = new MessageStreams(streamMirror)
    this.egress = new EgressConfig(egressMirror, orgs, domains, this.organizations, this.streams)
    // the holds and orders live in the same bucket under `queue.` keys, which the egress reader never lists
    this.queues = new QueueControls(egressMirror as unknown as KvMirror<QueueControlRecord>)
    this.suppressionLists = new SuppressionList(suppressions, erasedKey)
    // paused streams live in the same bucket under `pause.` keys, which neither the egress reader nor the queue controls list
    this.pauses = new StreamPauses(egressMirror as unknown as KvMirror<unknown>)
  }

  /** Streams paused by the reputation guard (`cp.pauses.paused(org, stream)`), and the one writer of them. */
  readonly pauses: StreamPauses

  /** Each organisation's broadcast message streams, and the one writer of them (transactional is never stored). */
  readonly streams: MessageStreams

  /** Each organisation's suppressions in address order, expiry applied (`suppressions` is their mirror). */
  readonly suppressionLists: SuppressionList

  /** The one writer of organisation records: creation, plan, suspension, removal (`orgs` is their mirror, to read). */
  readonly organizations: Organizations

  /** Return-path (VERP) keys: the newest signs, every listed one verifies. */
  readonly verpKeys: VerpKeyRing
  /** Keys of the operator role (`ob_op_…`), which reach only the operator API. */
  readonly operatorKeys: OperatorKeys
  /** Egress sources, pools and limit overrides (`cp.egress.pool(name)`, …), and the one writer of them. */
  readonly egress: EgressConfig
  /** The operator's holds and orders on waiting mail (`cp.queues.heldBy(…)`, …), and the one writer of them. */
  readonly queues: QueueControls

  /** `storeBytes`: OB_NATS_STORE_MB in bytes, of which each bucket gets its share (protocol/store_budget.ts). */
  /**
   * `secret`: OB_SECRET when set (else the installation's random one, kept in the settings bucket), from which the key
   * of erased addresses' hashes is derived once.
   */
  static async open (nc: NatsConnection, opts: { replicas: number, storeBytes?: number, secret?: string }): Promise<ControlPlane> {
    const kvm = new Kvm(nc)
    const jsm = await jetstreamManager(nc)
    const storeBytes = opts.storeBytes ?? DEFAULT_NATS_STORE_MB * 1024 * 1024
    const bucket = async (name: string): Promise<KV> => {
      const kv = await kvm.create(name, kvBucketOptions(opts.replicas, storeBytes, name))
      await ensureStoreShare(jsm, `KV_${name}`, kvShareBytes(storeBytes, name))
      return kv
    }
    const [
      orgs, domains, domainNames, apiKeys, webhooks, templates, routes, suppressions, settings, verpKeys, operatorKeys, egress, streams
    ] = await Promise.all([
      bucket(KV_BUCKETS.orgs), bucket(KV_BUCKETS.domains), bucket(KV_BUCKETS.domainNames), bucket(KV_BUCKETS.apiKeys),
      bucket(KV_BUCKETS.webhooks), bucket(KV_BUCKETS.templates), bucket(KV_BUCKETS.routes), bucket(KV_BUCKETS.suppressions),
      bucket(KV_BUCKETS.settings), bucket(KV_BUCKETS.verpKeys), bucket(KV_BUCKETS.operatorKeys), bucket(KV_BUCKETS.egress),
      bucket(KV_BUCKETS.streams)
    ])
    const suppressionWriter = new JsPublisher(nc)
    const mirrors = await Promise.all([
      KvMirror.open<OrgRecord>(orgs),
      KvMirror.open<DomainRecord>(domains, { id: (d) => d.id }),
      KvMirror.open<string>(domainNames),
      KvMirror.open<ApiKeyRecord>(apiKeys, { hash: (k) => k.hash }),  // keyed by key id
      KvMirror.open<WebhookRecord>(webhooks, { id: (w) => w.id }, { org: (w) => w.org_id }),
      KvMirror.open<TemplateRecord>(templates, { id: (t) => t.id }),
      KvMirror.open<RouteRecord>(routes, { id: (r) => r.id }),
      KvMirror.open<SuppressionRecord>(suppressions, {}, {}, suppressionWriter)
    ])
    const [verpKeyMirror, operatorKeyMirror, egressMirror, streamMirror] = await Promise.all([
      KvMirror.open<VerpKeyRecord>(verpKeys),
      KvMirror.open<OperatorKeyRecord>(operatorKeys, { hash: (k) => k.hash }),
      KvMirror.open<EgressEntry>(egress),
      KvMirror.open<StreamRecord>(streams, {}, { org: (st) => st.org_id })
    ])
    const erasedKey = erasedAddressKey(await installationSecret(settings, opts.secret))
    const cp = new ControlPlane(
      ...mirrors, settings, verpKeyMirror, operatorKeyMirror, egressMirror, erasedKey, streamMirror, suppressionWriter
    )
    await cp.verpKeys.ensure()
    return cp
  }

  /**
   * The key record for a presented key value, or undefined: a map look-up by the value's SHA-256. The digests of
   * recently presented values are remembered in this process only (never stored), since a busy client presents
   * the same key on every request; the record itself is always looked up afresh, so a revocation applies at once.
   */
  keyByValue (value: string): ApiKeyRecord | undefined {
    const known = this.presentedKeyHashes.get(value)
    if (known !== undefined) return this.apiKeys.getBy('hash', known)
    const hash = sha256Hex(value)
    const key = this.apiKeys.getBy('hash', hash)
    // Only values that matched a key are remembered, so guessed values cannot crowd out real ones.
    if (key !== undefined) {
      if (this.presentedKeyHashes.size >= PRESENTED_KEY_HASHES) this.presentedKeyHashes.clear()
      this.presentedKeyHashes.set(value, hash)
    }
    return key
  }

  domain (orgId: string, domainId: string): DomainRecord | undefined {
    return this.domains.get(`${orgId}.${domainId}`)
  }

  /** The verified domain that owns `name`, or undefined while no organisation has verified it. */
  domainOwner (name: string): DomainRecord | undefined {
    const key = this.domainNames.get(name.toLowerCase())
    const domain = key === undefined ? undefined : this.domains.get(key)
    return domain?.status === 'verified' ? domain : undefined
  }

  /**
   * How long the read model keeps the organisation's messages and events, in ms: its own setting (docs/privacy.md),
   * never over the installation's 30 days. A lookup in the mirror, cheap enough for every write.
   */
  readModelRetention (orgId: string): { messagesMs: number, eventsMs: number } {
    const r = this.orgs.get(orgId)?.retention
    const days = (d: number | undefined): number => Math.min(d ?? Infinity, EVENTS_MAX_AGE_MS / DAY_MS) * DAY_MS
    return { messagesMs: days(r?.messages_days), eventsMs: days(r?.events_days) }
  }

  /**
   * True while the organisation's list holds the address and the entry has not expired: an entry for every stream,
   * or, given `stream`, one for that stream only.
   */
  isSuppressed (orgId: string, email: string, stream?: string): boolean {
    return this.suppressionLists.isSuppressed(orgId, email, Date.now(), stream)
  }

  /**
   * Why the organisation's list refuses the address on `stream` (hard_bounce, complaint, unsubscribe, manual): the entry
   * for every stream, else the stream's own; undefined when neither suppresses it.
   */
  suppressionReason (orgId: string, email: string, stream?: string): SuppressionRecord['reason'] | undefined {
    const now = Date.now()
    return this.suppressionLists.active(orgId, email, now)?.reason ??
      (isBroadcast(stream) ? this.suppressionLists.active(orgId, email, now, stream)?.reason : undefined)
  }

  close (): void {
    const mirrors = [
      this.orgs, this.domains, this.domainNames, this.apiKeys, this.webhooks, this.templates, this.routes, this.suppressions,
      this.verpKeyMirror, this.operatorKeyMirror, this.egressMirror, this.streamMirror
    ]
    for (const m of mirrors) m.stop()
    this.suppressionWriter.close()
  }
}

export { suppressionKey }
