import { jetstream, type JetStreamClient } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { ControlPlane } from '../control_plane/mod.ts'
import {
  eventId, eventRecord, isBroadcast, streamField, tagsField, installationSecret, isTrackableUrl, verifyToken, type TokenClaims, idTime
} from '../../protocol/mod.ts'
import { publishEvent, suppressAddress } from './event_publish.ts'

/**
 * Identical open or click requests (same token, IP address and user agent) inside one slot of this length count
 * once: mail clients and proxies often fetch the pixel twice in a row. Anything else is one event per request,
 * as Postmark and Resend do. The slot id is part of the event id, and OB_EVENTS drops duplicate ids.
 */
export const TRACKING_DEDUPE_SLOT_MS = 10_000 // 10 s

/**
 * Open and click events published but not yet acknowledged by JetStream. The pixel and the redirect are answered
 * without waiting for the acknowledgement; past this many outstanding, a request waits for its own, so a slow or
 * absent NATS slows tracking responses down instead of growing memory.
 */
export const MAX_PENDING_TRACKING_EVENTS = 2048

/** Lifetime of open and click tokens unless configured (OB_TRACKING_TOKEN_TTL_S). */
export const DEFAULT_TRACKING_TOKEN_TTL_MS = 365 * 24 * 3600 * 1000 // 1 year

/**
 * The tags, sending domain and stream of an organisation's message (MessageStore.messageTags): tracking tokens carry only
 * its id.
 */
export type MessageTags = (orgId: string, messageId: string) => Promise<{ tags: readonly string[], domain?: string, stream?: string }>
const noTags: MessageTags = async () => await Promise.resolve({ tags: [] })

export interface TrackingRequest {
  ip: string
  userAgent: string
  now?: number
}

/**
 * Turns verified tracking tokens into `opened`, `clicked` and `unsubscribed` events. One per gateway process;
 * the secret is read once at start.
 */
export class TrackingRecorder {
  private pending = 0

  private constructor (
    private readonly secret: Buffer,
    private readonly js: JetStreamClient,
    private readonly cp: ControlPlane,
    private readonly tokenTtlMs: number,
    private readonly tagsOf: MessageTags
  ) {}

  /**
   * Publishes without making the caller wait for the PubAck, unless too many are outstanding. `onError` hears
   * about an event that could not be stored.
   */
  private async background (publish: Promise<void>, onError: (err: unknown) => void): Promise<void> {
    this.pending++
    const settled = publish.catch(onError).finally(() => { this.pending-- })
    if (this.pending > MAX_PENDING_TRACKING_EVENTS) await settled
  }

  /**
   * `tokenTtlMs`: how long open and click tokens stay valid, counted from the creation of the message they were
   * sent in (its id carries the time, so every token ever issued has a lifetime without a field of its own).
   */
  static async open (
    nc: NatsConnection, cp: ControlPlane, configuredSecret: string | undefined, tokenTtlMs: number = DEFAULT_TRACKING_TOKEN_TTL_MS,
    tagsOf: MessageTags = noTags
  ): Promise<TrackingRecorder> {
    return new TrackingRecorder(await installationSecret(cp.settings, configuredSecret), jetstream(nc), cp, tokenTtlMs, tagsOf)
  }

  /**
   * The token's claims when it is genuine, of the expected kind and, for opens and clicks, not expired; undefined
   * otherwise. Unsubscribe tokens do not expire: a recipient may leave from any message they still hold.
   */
  verify (token: string, kind: TokenClaims['k'], now = Date.now()): TokenClaims | undefined {
    const claims = verifyToken(this.secret, token)
    if (claims === undefined || claims.k !== kind) return undefined
    if (kind !== 'u') {
      const sent = idTime(claims.m)
      if (sent === undefined || now - sent > this.tokenTtlMs) return undefined
    }
    if (kind === 'c' && (typeof claims.u !== 'string' || !/^https?:\/\//i.test(claims.u))) return undefined
    // Tokens signed before links were checked may carry anything; the URL is checked again before it becomes a header.
    if (kind === 'c' && (typeof claims.u !== 'string' || !isTrackableUrl(claims.u))) return undefined
    return claims
  }

  /** Resolves once the event is handed to NATS (see `background`); the reader never waits on the event stream. */
  async opened (c: TokenClaims, req: TrackingRequest, onError: (err: unknown) => void = () => {}): Promise<void> {
    const now = req.now ?? Date.now()
    const id = eventId('opened', c.o, c.m, c.r, req.ip, req.userAgent, Math.floor(now / TRACKING_DEDUPE_SLOT_MS))
    await this.background(this.tagsOf(c.o, c.m).then(async ({ tags, domain, stream }) => {
      await publishEvent(this.js, eventRecord(id, 'opened', c.o, {
        message_id: c.m, to: c.r, opened_at: new Date(now).toISOString(), user_agent: req.userAgent, ip_address: req.ip, ...tagsField(tags),
        ...streamField(stream)
      }, c.m, undefined, 'live', domain))
    }), onError)
  }

  async clicked (c: TokenClaims, req: TrackingRequest, onError: (err: unknown) => void = () => {}): Promise<void> {
    const now = req.now ?? Date.now()
    const id = eventId('clicked', c.o, c.m, c.r, c.u ?? '', req.ip, req.userAgent, Math.floor(now / TRACKING_DEDUPE_SLOT_MS))
    await this.background(this.tagsOf(c.o, c.m).then(async ({ tags, domain, stream }) => {
      await publishEvent(this.js, eventRecord(id, 'clicked', c.o, {
        message_id: c.m,
        to: c.r,
        clicked_at: new Date(now).toISOString(),
        url: c.u ?? '',
        user_agent: req.userAgent,
        ip_address: req.ip,
        ...tagsField(tags),
        ...streamField(stream)
      }, c.m, undefined, 'live', domain))
    }), onError)
  }

  /**
   * Suppresses the address first, then publishes: a failure to publish leaves the address suppressed (what the
   * recipient asked for) and the request fails so the client may retry. One event per message and recipient.
   * Resolves true when the address was added to the suppression list (it was not on it yet).
   */
  async unsubscribed (c: TokenClaims, method: 'link' | 'one-click', now = Date.now()): Promise<boolean> {
    let looked: Awaited<ReturnType<MessageTags>>
    try {
      looked = await this.tagsOf(c.o, c.m)
    } catch (err) {
      // the recipient's wish holds even when the message cannot be read: every stream, then the request fails
      await suppressAddress(this.cp, c.o, c.r, 'unsubscribe', c.m)
      throw err
    }
    const { tags, domain, stream } = looked
    // leaving broadcast mail stops that stream only; leaving transactional mail (or a message no longer kept, whose
    // stream is unknown) stops every stream
    const added = await suppressAddress(this.cp, c.o, c.r, 'unsubscribe', c.m, isBroadcast(stream) ? stream : undefined)
    await publishEvent(this.js, eventRecord(eventId('unsubscribed', c.o, c.m, c.r), 'unsubscribed', c.o, {
      message_id: c.m, to: c.r, unsubscribed_at: new Date(now).toISOString(), method, ...tagsField(tags), ...streamField(stream)
    }, c.m, undefined, 'live', domain))
    return added
  }
}
