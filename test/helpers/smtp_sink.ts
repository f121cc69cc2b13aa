import { isIPv6 } from 'node:net'
import { SMTPServer, type SMTPServerAddress } from 'smtp-server'

/**
 * A real SMTP server for delivery tests. The recipient's local part decides the reply:
 *   permfail… → 550 5.1.1 at RCPT; policy… → 550 5.7.1; toobig… → 552 5.3.4; full… → 552 5.2.2 (PERMANENT);
 *   tempfail… → 451 at RCPT the first `tempfailTimes` times (per address), then accepted;
 *   tempfail<N>times… → the same the first N times, whatever `tempfailTimes` says;
 *   slow…     → the reply to DATA comes after `slowMs`; anything else → 250.
 * Accepted messages are recorded with their envelope, raw bytes and headers, and with the client's address and EHLO
 * name; connections are counted per client address (how many, and how many open at once at most).
 */
export interface SinkMessage {
  mailFrom: string
  rcptTo: string[]
  raw: Buffer
  /** Header name (lower case) → first value, unfolded. */
  headers: Map<string, string>
  messageId: string
  secure: boolean
  /** When the data of the message had arrived (ms since the epoch). */
  receivedAt: number
  /** The address the client connected from (`127.0.0.2`, `::1`; an IPv4-mapped address as its IPv4 address). */
  remoteAddress: string
  /** The client's port: which of its connections the message came on. */
  remotePort: number
  /** The name the client said in EHLO (or HELO); '' when it said none. */
  ehlo: string
}

export interface SinkOptions {
  tempfailTimes?: number
  slowMs?: number
  hideStartTls?: boolean
  /** Refuse STARTTLS altogether (hideStartTls only leaves it out of the EHLO answer; a client may still ask). */
  noStartTls?: boolean
  /** Keep each message's raw bytes (default true). */
  keepRaw?: boolean
  /** Record messages at all (default true); false only counts them, for benchmarks. */
  record?: boolean
  /** Listen address (an IPv4 or IPv6 literal, e.g. `::1`) and port (default 127.0.0.1 and a free port). */
  host?: string
  port?: number
  /**
   * A reply of the test's own to RCPT, chosen by the recipient and the client's address (a receiver that throttles or
   * blocks one sending address): `{ code, message }` answers `<code> <message>` (a 421 closes the session, as
   * receivers do), undefined goes on with the local-part rules above.
   */
  rcptReply?: (rcpt: string, remoteAddress: string) => { code: number, message: string } | undefined
  /** The certificate STARTTLS presents (default: smtp-server's own self-signed one, which nothing trusts). */
  tls?: { key: Buffer, cert: Buffer }
  /**
   * Offer AUTH, even without TLS, and accept any credentials: every attempt is recorded in `authAttempts` (a relay
   * test checks which credentials reached the server, and over what).
   */
  auth?: boolean
}

export interface AuthAttempt { username: string, password: string, secure: boolean }

function parseHeaders (raw: Buffer): Map<string, string> {
  const end = raw.indexOf('\r\n\r\n')
  const head = raw.subarray(0, end === -1 ? raw.length : end).toString('utf8').replace(/\r\n[ \t]+/g, ' ')
  const out = new Map<string, string>()
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    if (!out.has(name)) out.set(name, line.slice(colon + 1).trim())
  }
  return out
}

/** Local-part prefix → the permanent RCPT reply the sink gives it. */
const PERMANENT: ReadonlyArray<[string, number, string]> = [
  ['permfail', 550, '5.1.1 mailbox unavailable'],
  ['policy', 550, '5.7.1 message refused by policy: sender reputation'],
  ['toobig', 552, '5.3.4 message size exceeds fixed limit'],
  ['full', 552, '5.2.2 mailbox full']
]

export class SmtpSink {
  readonly messages: SinkMessage[] = []
  /** Every RCPT reply the sink gave, in order: `<address> <code>`. */
  readonly rcptLog: string[] = []
  /** AUTH attempts (with `auth: true`), with whether the session was encrypted. */
  readonly authAttempts: AuthAttempt[] = []
  /** STARTTLS handshakes that completed. */
  tlsSessions = 0
  accepted = 0
  /** SMTP sessions opened with the sink, whatever became of them. */
  connections = 0
  /** Sessions opened per client address. */
  readonly connectionsByAddress = new Map<string, number>()
  /** Sessions open now per client address. */
  readonly openByAddress = new Map<string, number>()
  /** The most sessions open at once per client address (for connection caps). */
  readonly peakOpenByAddress = new Map<string, number>()
  /**
   * The client ports of the sessions open now. Once a killed client's sessions have closed here, the sink has
   * recorded every message whose data it had received.
   */
  readonly openSessions = new Set<number>()
  private readonly tempfails = new Map<string, number>()
  private waiters: Array<() => void> = []

  private constructor (private readonly server: SMTPServer, readonly port: number, readonly host: string) {}

  static async start (opts: SinkOptions = {}): Promise<SmtpSink> {
    let sink!: SmtpSink
    const tempfailTimes = opts.tempfailTimes ?? 1
    const slowMs = opts.slowMs ?? 3000
    const keepRaw = opts.keepRaw ?? true
    const record = opts.record ?? true
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: [...(opts.auth === true ? [] : ['AUTH']), ...(opts.noStartTls === true ? ['STARTTLS'] : [])],
      ...(opts.auth === true ? { allowInsecureAuth: true, authMethods: ['PLAIN', 'LOGIN'] } : {}),
      ...(opts.tls !== undefined ? { key: opts.tls.key, cert: opts.tls.cert } : {}),
      onAuth (auth, session, callback) {
        sink.authAttempts.push({ username: auth.username ?? '', password: auth.password ?? '', secure: session.secure })
        callback(null, { user: auth.username })
      },
      onSecure (_socket, _session, callback) {
        sink.tlsSessions++
        callback()
      },
      disableReverseLookup: true,
      hideSTARTTLS: opts.hideStartTls ?? false,
      logger: false,
      size: 30 * 1024 * 1024,
      onConnect (session, callback) {
        sink.connections++
        sink.openSessions.add(session.remotePort)
        const from = session.remoteAddress
        sink.connectionsByAddress.set(from, (sink.connectionsByAddress.get(from) ?? 0) + 1)
        const open = (sink.openByAddress.get(from) ?? 0) + 1
        sink.openByAddress.set(from, open)
        if (open > (sink.peakOpenByAddress.get(from) ?? 0)) sink.peakOpenByAddress.set(from, open)
        callback()
      },
      onClose (session) {
        sink.openSessions.delete(session.remotePort)
        const open = (sink.openByAddress.get(session.remoteAddress) ?? 1) - 1
        if (open > 0) sink.openByAddress.set(session.remoteAddress, open)
        else sink.openByAddress.delete(session.remoteAddress)
      },
      onRcptTo (address: SMTPServerAddress, session, callback) {
        const own = opts.rcptReply?.(address.address, session.remoteAddress)
        if (own !== undefined) {
          sink.rcptLog.push(`${address.address} ${own.code}`)
          callback(Object.assign(new Error(own.message), { responseCode: own.code })); return
        }
        const local = address.address.slice(0, address.address.lastIndexOf('@')).toLowerCase()
        const permanent = PERMANENT.find(([prefix]) => local.startsWith(prefix))
        if (permanent !== undefined) {
          sink.rcptLog.push(`${address.address} ${permanent[1]}`)
          const err = new Error(permanent[2]) as Error & { responseCode: number }
          err.responseCode = permanent[1]
          callback(err); return
        }
        if (local.startsWith('tempfail')) {
          const seen = sink.tempfails.get(address.address) ?? 0
          const times = /^tempfail(\d+)times/.exec(local)
          if (seen < (times !== null ? Number(times[1]) : tempfailTimes)) {
            sink.tempfails.set(address.address, seen + 1)
            sink.rcptLog.push(`${address.address} 451`)
            const err = new Error('4.7.1 try again later') as Error & { responseCode: number }
            err.responseCode = 451
            callback(err); return
          }
        }
        sink.rcptLog.push(`${address.address} 250`)
        callback()
      },
      onData (stream, session, callback) {
        const chunks: Buffer[] = []
        stream.on('data', (c: Buffer) => chunks.push(c))
        stream.on('end', () => {
          const raw = Buffer.concat(chunks)
          const rcptTo = session.envelope.rcptTo.map((r) => r.address)
          const receivedAt = Date.now()
          const finish = (): void => {
            const headers = record ? parseHeaders(raw) : new Map<string, string>()
            if (record) {
              sink.messages.push({
                mailFrom: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
                rcptTo,
                raw: keepRaw ? raw : Buffer.alloc(0),
                headers,
                messageId: headers.get('message-id') ?? '',
                secure: session.secure,
                receivedAt,
                remoteAddress: session.remoteAddress,
                remotePort: session.remotePort,
                ehlo: typeof session.hostNameAppearsAs === 'string' ? session.hostNameAppearsAs : ''
              })
            }
            sink.accepted++
            callback(null, 'Message queued as sink')
            const w = sink.waiters
            sink.waiters = []
            for (const wake of w) wake()
          }
          if (rcptTo.some((r) => r.toLowerCase().startsWith('slow'))) setTimeout(finish, slowMs)
          else finish()
        })
      }
    })
    const host = opts.host ?? '127.0.0.1'
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject)
      server.listen(opts.port ?? 0, host, () => resolve((server.server.address() as { port: number }).port))
    })
    server.on('error', () => {})
    sink = new SmtpSink(server, port, host)
    return sink
  }

  get url (): string {
    return `smtp://${isIPv6(this.host) ? `[${this.host}]` : this.host}:${this.port}`
  }

  /** Messages accepted for `rcpt` (envelope recipient, case-insensitive). */
  to (rcpt: string): SinkMessage[] {
    const r = rcpt.toLowerCase()
    return this.messages.filter((m) => m.rcptTo.some((x) => x.toLowerCase() === r))
  }

  /** Resolves when `predicate` holds, checked after every accepted message; rejects after `timeoutMs`. */
  async until (predicate: () => boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!predicate()) {
      const left = deadline - Date.now()
      if (left <= 0) throw new Error('sink: condition not met in time')
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200))
        this.waiters.push(() => { clearTimeout(t); resolve() })
      })
    }
  }

  async close (): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
