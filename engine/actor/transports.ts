import { isIP, type Socket } from 'node:net'
import type { ConnectionOptions } from 'node:tls'
import { Readable } from 'node:stream'
import { domainToASCII } from 'node:url'
import SMTPPool from 'nodemailer/lib/smtp-pool'
import { openPoolSocket, type GetSocket } from '../egress/pool_socket.ts'

/** What a pool sends: the envelope and the finished, signed bytes of one recipient's copy. */
export interface RawMail { envelope: { from: string, to: string[] }, raw: Buffer, messageId: string }
export interface SentInfo { response?: unknown }

const NO_DATA = Object.freeze({})
function noRead (): void {}

/**
 * The message object an SMTP pool asks for (the part of nodemailer's transport interface it reads): the envelope,
 * the Message-ID for its log and a stream of the bytes. Methods live on the prototype, so a message costs one
 * object and one Readable. Going through `Mail#sendMail` would wrap the bytes in a MailMessage and a MimeNode whose
 * read stream is a `stream.pipeline` of line-ending transforms, with an AbortController (and a DOMException when
 * it finishes) per message.
 */
class RawMessage {
  readonly data = NO_DATA
  readonly message = this
  constructor (private readonly mail: RawMail) {}

  getEnvelope (): { from: string, to: string[] } {
    // a fresh object: the pool adds per-send fields to it
    return { from: asciiDomain(this.mail.envelope.from), to: this.mail.envelope.to.map(asciiDomain) }
  }

  messageId (): string { return this.mail.messageId }

  getHeader (key: string): string | undefined { return key.toLowerCase() === 'message-id' ? this.mail.messageId : undefined }

  createReadStream (): Readable {
    const stream = new Readable({ read: noRead })
    stream.push(this.mail.raw)
    stream.push(null)
    return stream
  }
}

/** An internationalised domain in its A-label form (RFC 5890), as nodemailer's envelope writes it. */
function asciiDomain (address: string): string {
  const at = address.lastIndexOf('@')
  // eslint-disable-next-line no-control-regex
  if (at < 0 || /^[\x00-\x7f]*$/.test(address.slice(at + 1))) return address
  return address.slice(0, at + 1) + (domainToASCII(address.slice(at + 1)) || address.slice(at + 1))
}

/** One destination's pool, sending raw messages. */
export class PooledDestination {
  /** Messages handed to the pool and not yet answered: a pool with any is not idle, however long its DATA takes. */
  inFlight = 0

  /** Called each time the last message in flight is answered (the pool's connections are all idle then). */
  onIdle?: () => void

  /** The pool's open sockets (it opens them through `opened`), for `reset`. */
  private readonly sockets = new Set<Socket>()

  constructor (readonly pool: SMTPPool) {}

  /** A socket the pool now uses; forgotten when it closes. */
  opened (socket: Socket): void {
    this.sockets.add(socket)
    socket.once('close', () => this.sockets.delete(socket))
  }

  /**
   * Ends every connection at once with a TCP reset, whatever it was doing, and closes the pool: what the kernel still
   * held to send is dropped, so a transaction stalled on a cut link cannot complete once the link is back. Its sends
   * fail with the connection's error.
   */
  reset (): void {
    for (const s of this.sockets) {
      try {
        s.resetAndDestroy()
      } catch {
        s.destroy() // a handle that is not TCP cannot be reset
      }
    }
    this.pool.close({ force: true })
  }

  async sendMail (mail: RawMail): Promise<SentInfo> {
    this.inFlight++
    try {
      return await new Promise((resolve, reject) => {
        this.pool.send(new RawMessage(mail) as unknown as Parameters<SMTPPool['send']>[0], (err, info) => {
          if (err !== null && err !== undefined) reject(err)
          else resolve(info ?? {})
        })
      })
    } finally {
      if (--this.inFlight === 0) this.onIdle?.()
    }
  }

  close (): void { this.pool.close() }
}

/**
 * Pooled SMTP transports, one per destination (MX host and port, or the relay, from one local address saying one
 * EHLO name), owned by one thread. A pool keeps up to `maxConnections` sockets open and sends up to `maxMessages`
 * messages on each before reconnecting (the destination's own numbers, else the thread's); a destination unused for
 * IDLE_MS has its pool closed, and the cache's `onClose` is told its key.
 */
const MAX_MESSAGES_PER_CONNECTION = 100
const IDLE_MS = 60_000 // 1 min
/**
 * A pool of an egress lane is closed after this long without a message in flight: each of its connections holds one
 * of the lane's slots, counted across every thread of every engine, and an idle connection kept here would keep
 * another thread's mail for the lane waiting for as long as it is kept. Postfix keeps an idle connection 2 s
 * (smtp_connection_cache_time_limit) for the same reason: to reuse it for a burst, not to hold the receiver's slots.
 */
export const LANE_IDLE_MS = 2_000
const SWEEP_MS = 15_000

export interface Destination {
  /** Throttle key: the MX host name or the relay host. */
  host: string
  /** Address to connect to (the MX host resolved by us; the relay host as configured). */
  connectTo: string
  port: number
  secure: boolean
  auth?: { user: string, pass: string }
  /**
   * Local address the connections are bound to (an egress source's IPv4 or IPv6 literal); unset: whatever the host's
   * routing picks. It must be of the family of `connectTo`: a socket bound to one family cannot reach the other.
   * An address this host does not have fails each connection with `EADDRNOTAVAIL`, which classifies as deferred.
   */
  localAddress?: string
  /** The name said in EHLO (the source's reverse DNS name); unset: the host's name. */
  ehlo?: string
  /** Sockets this destination's pool keeps open at most; unset: the thread's `maxConnections`. */
  maxConnections?: number
  /** Messages sent on one connection before it is replaced; unset: MAX_MESSAGES_PER_CONNECTION. */
  maxMessages?: number
  /** The address family of `connectTo`, for the caller's information (not part of the pool key). */
  family?: 4 | 6
  /** The egress lane (source × provider) whose limits and connection slots this pool's connections count against. */
  lane?: string
  /** Opens the pool's sockets (nodemailer's `getSocket` hook): the egress lane's, which hold cluster-wide slots. */
  getSocket?: GetSocket
  /** No message goes without STARTTLS (a provider's `tls: required`): a server that does not offer it defers the mail. */
  requireTLS?: boolean
  /**
   * TLS is required and the peer's certificate must verify for `host` (trusted CAs, name, dates): the relay holding
   * credentials, an MX host under an MTA-STS policy. A failure ends the session before MAIL FROM or AUTH.
   */
  tlsVerify?: boolean
}

export interface TransportCacheOptions {
  /**
   * Told the key (`poolKey`) of each pool the cache closes: one idle for IDLE_MS, and every pool on `close()`.
   * A caller holding resources per pool (cluster-wide connection slots) releases them here. Called from a timer:
   * it must not throw (an asynchronous release handles its own failure).
   */
  onClose?: (key: string) => void
  /** The CAs a verified session trusts (engine/tls/outbound_tls.ts trustedCas); unset: Node's bundled roots. */
  ca?: string[]
}

/**
 * The pool a destination's mail goes through. Two sources sending to one MX host are two pools, and so are two sets
 * of limits: a destination whose `maxConnections` or `maxMessages` changes gets a new pool at once (the old one is
 * closed when idle) instead of keeping the old numbers for as long as mail keeps it busy.
 */
export function poolKey (d: Destination): string {
  return `${d.host}|${d.connectTo}:${d.port}|${d.localAddress ?? ''}|${d.ehlo ?? ''}|${d.maxConnections ?? ''}/${d.maxMessages ?? ''}` +
    `|${d.lane ?? ''}|${d.requireTLS === true ? 'tls' : ''}|${d.tlsVerify === true ? 'verify' : ''}`
}

export class TransportCache {
  private readonly pools = new Map<string, { transport: PooledDestination, lastUsed: number, idleTimer?: NodeJS.Timeout | undefined }>()
  private readonly sweeper: NodeJS.Timeout
  private readonly onClose?: (key: string) => void
  private readonly ca?: string[]

  constructor (private readonly maxConnections: number, opts: TransportCacheOptions = {}) {
    if (opts.onClose !== undefined) this.onClose = opts.onClose
    if (opts.ca !== undefined) this.ca = opts.ca
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS)
    this.sweeper.unref()
  }

  get (d: Destination): PooledDestination {
    const key = poolKey(d)
    const hit = this.pools.get(key)
    if (hit !== undefined) {
      hit.lastUsed = Date.now()
      return hit.transport
    }
    const options: ConstructorParameters<typeof SMTPPool>[0] & object = {
      pool: true,
      host: d.connectTo,
      port: d.port,
      secure: d.secure,
      tls: this.tlsOptions(d),
      maxConnections: d.maxConnections ?? this.maxConnections,
      maxMessages: d.maxMessages ?? MAX_MESSAGES_PER_CONNECTION,
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 300_000, // RFC 5321 §4.5.3.2 allows a server 10 min for DATA; 5 min is what large MTAs wait
      disableFileAccess: true,
      disableUrlAccess: true,
      ...(d.localAddress !== undefined ? { localAddress: d.localAddress } : {}),
      ...(d.ehlo !== undefined ? { name: d.ehlo } : {}),
      // every socket is opened here (or by the egress lane's hook), so the pool knows its sockets and can reset them
      getSocket: (o: Parameters<GetSocket>[0], callback: Parameters<GetSocket>[1]) => {
        (d.getSocket ?? plainSocket(d))(o, (err, opened) => {
          if (opened !== undefined && opened !== false) transport.opened(opened.connection)
          callback(err, opened)
        })
      },
      ...(d.requireTLS === true || d.tlsVerify === true ? { requireTLS: true } : {}),
      ...(d.auth !== undefined ? { auth: d.auth } : {})
    }
    // the pool's getSocket hook refers to `transport`; the pool opens no socket before its first send
    const transport = new PooledDestination(new SMTPPool(options))
    this.pools.set(key, { transport, lastUsed: Date.now() })
    if (d.lane !== undefined) transport.onIdle = () => { this.closeWhenIdle(key, transport) }
    return transport
  }

  private tlsOptions (d: Destination): ConnectionOptions {
    const sni = isIP(d.host) === 0 ? { servername: d.host } : {}
    // TLS certificate names of MX hosts without a policy are rarely checkable; opportunistic STARTTLS must not fail on them
    if (d.tlsVerify !== true) return { rejectUnauthorized: false, ...sni }
    // the name checked is `servername` (else the host connected to, for a relay given as an address)
    return { rejectUnauthorized: true, minVersion: 'TLSv1.2', ...sni, ...(this.ca !== undefined ? { ca: this.ca } : {}) }
  }

  /**
   * Closes a lane's pool once it has had nothing in flight for LANE_IDLE_MS, giving its connection slots back. One
   * timer per pool at a time: when it fires early (the pool was used meanwhile) it waits for the rest.
   */
  private closeWhenIdle (key: string, transport: PooledDestination): void {
    const entry = this.pools.get(key)
    if (entry === undefined || entry.transport !== transport || entry.idleTimer !== undefined) return
    const check = (): void => {
      entry.idleTimer = undefined
      if (this.pools.get(key) !== entry || transport.inFlight > 0) return
      const left = entry.lastUsed + LANE_IDLE_MS - Date.now()
      if (left > 0) { entry.idleTimer = setTimeout(check, left).unref(); return }
      this.closePool(key, transport)
    }
    entry.idleTimer = setTimeout(check, LANE_IDLE_MS).unref()
  }

  /**
   * Resets `transport`'s connections (PooledDestination.reset) and forgets the pool: the next send to its destination
   * opens a new one. For work whose right to send ended while its transaction was in flight.
   */
  reset (transport: PooledDestination): void {
    for (const [key, p] of this.pools) if (p.transport === transport) this.forget(key)
    transport.reset()
  }

  /** Keys of the pools open now. */
  keys (): string[] { return [...this.pools.keys()] }

  private sweep (): void {
    const now = Date.now()
    for (const [key, p] of this.pools) {
      if (now - p.lastUsed > IDLE_MS && p.transport.inFlight === 0) this.closePool(key, p.transport)
    }
  }

  private closePool (key: string, transport: PooledDestination): void {
    this.forget(key)
    transport.close()
  }

  /** Drops the pool under `key` and its idle timer, and tells `onClose`; its connections are the caller's to end. */
  private forget (key: string): void {
    clearTimeout(this.pools.get(key)?.idleTimer)
    this.pools.delete(key)
    this.onClose?.(key)
  }

  close (): void {
    clearInterval(this.sweeper)
    for (const [key, p] of this.pools) this.closePool(key, p.transport)
  }
}

/** A pool's socket to the destination, bound to its local address (openPoolSocket). */
function plainSocket (d: Destination): GetSocket {
  return (options, callback) => {
    openPoolSocket({
      host: options.host ?? d.connectTo,
      port: Number(options.port ?? d.port),
      ...(d.localAddress !== undefined ? { localAddress: d.localAddress } : {})
    }, d.connectTo, callback)
  }
}

/**
 * The smart host of `OB_SMTP_RELAY` (`smtp://[user:pass@]host:port`, `smtps://` for implicit TLS). `tls` `verify`:
 * a relay given credentials, or `smtps://`, is spoken to only over TLS with a certificate that verifies for its host,
 * so the credentials never go in clear or to whoever sits in the path; `insecure`: as opportunistic as MX hosts.
 */
export function relayDestination (relay: string, tls: 'verify' | 'insecure' = 'verify'): Destination {
  const u = new URL(relay)
  const secure = u.protocol === 'smtps:'
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1')
  const d: Destination = { host, connectTo: host, port: u.port === '' ? (secure ? 465 : 25) : Number(u.port), secure }
  if (u.username !== '') d.auth = { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) }
  if (tls === 'verify' && (d.auth !== undefined || secure)) d.tlsVerify = true
  return d
}
