import { isIP } from 'node:net'
import nodemailer, { type Transporter } from 'nodemailer'
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js'

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
  private readonly pools = new Map<string, { transport: Transporter<SMTPPool.SentMessageInfo>, lastUsed: number }>()
  private readonly sweeper: NodeJS.Timeout

  constructor (private readonly maxConnections: number) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS)
    this.sweeper.unref()
  }

  get (d: Destination): Transporter<SMTPPool.SentMessageInfo> {
    const key = `${d.host}|${d.connectTo}:${d.port}`
    const hit = this.pools.get(key)
    if (hit !== undefined) {
      hit.lastUsed = Date.now()
      return hit.transport
    }
    const options: SMTPPool.Options = {
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
    const transport = nodemailer.createTransport(options)
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
