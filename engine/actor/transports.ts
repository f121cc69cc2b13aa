import { isIP } from 'node:net'
import { Readable } from 'node:stream'
import { domainToASCII } from 'node:url'
import SMTPPool from 'nodemailer/lib/smtp-pool'

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
  constructor (readonly pool: SMTPPool) {}

  async sendMail (mail: RawMail): Promise<SentInfo> {
    return await new Promise((resolve, reject) => {
      this.pool.send(new RawMessage(mail) as unknown as Parameters<SMTPPool['send']>[0], (err, info) => {
        if (err !== null && err !== undefined) reject(err)
        else resolve(info ?? {})
      })
    })
  }

  close (): void { this.pool.close() }
}

/**
 * Pooled SMTP transports, one per destination (MX host and port, or the relay), owned by one thread.
 * A pool keeps up to `maxConnections` sockets open and sends up to MAX_MESSAGES_PER_CONNECTION messages on
 * each before reconnecting; a destination unused for IDLE_MS has its pool closed.
 */
const MAX_MESSAGES_PER_CONNECTION = 100
const IDLE_MS = 60_000 // 1 min
const SWEEP_MS = 15_000

export interface Destination {
  /** Pool key and throttle key: the MX host name or the relay host. */
  host: string
  /** Address to connect to (the MX host resolved by us; the relay host as configured). */
  connectTo: string
  port: number
  secure: boolean
  auth?: { user: string, pass: string }
}

export class TransportCache {
  private readonly pools = new Map<string, { transport: PooledDestination, lastUsed: number }>()
  private readonly sweeper: NodeJS.Timeout

  constructor (private readonly maxConnections: number) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS)
    this.sweeper.unref()
  }

  get (d: Destination): PooledDestination {
    const key = `${d.host}|${d.connectTo}:${d.port}`
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
      // TLS certificate names of MX hosts are rarely checkable; opportunistic STARTTLS must not fail on them
      tls: { rejectUnauthorized: false, ...(isIP(d.host) === 0 ? { servername: d.host } : {}) },
      maxConnections: this.maxConnections,
      maxMessages: MAX_MESSAGES_PER_CONNECTION,
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 300_000, // RFC 5321 §4.5.3.2 allows a server 10 min for DATA; 5 min is what large MTAs wait
      disableFileAccess: true,
      disableUrlAccess: true,
      ...(d.auth !== undefined ? { auth: d.auth } : {})
    }
    const transport = new PooledDestination(new SMTPPool(options))
    this.pools.set(key, { transport, lastUsed: Date.now() })
    return transport
  }

  private sweep (): void {
    const now = Date.now()
    for (const [key, p] of this.pools) {
      if (now - p.lastUsed > IDLE_MS) {
        p.transport.close()
        this.pools.delete(key)
      }
    }
  }

  close (): void {
    clearInterval(this.sweeper)
    for (const p of this.pools.values()) p.transport.close()
    this.pools.clear()
  }
}

/** The smart host of `OB_SMTP_RELAY` (`smtp://[user:pass@]host:port`, `smtps://` for implicit TLS). */
export function relayDestination (relay: string): Destination {
  const u = new URL(relay)
  const secure = u.protocol === 'smtps:'
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1')
  const d: Destination = { host, connectTo: host, port: u.port === '' ? (secure ? 465 : 25) : Number(u.port), secure }
  if (u.username !== '') d.auth = { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) }
  return d
}
