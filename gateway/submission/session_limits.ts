import type { SMTPServer, SMTPServerSession } from 'smtp-server'
import { clientIdentity } from '../../protocol/mod.ts'
import { SmtpReply } from './smtp_reply.ts'

export interface SessionLimitSettings {
  /** Sessions open at once from one client address (an IPv6 client counts by its /64). */
  readonly maxConnectionsPerAddress: number
  /** How long a session may last from its connection, whatever it sends. */
  readonly sessionDeadlineMs: number
}

/**
 * The per-address cap and the session deadline of the submission server, as smtp-server hooks (the total cap is
 * smtp-server's own `maxClients`). smtp-server's idle timeout restarts with every byte, so a client trickling bytes
 * would hold a session for ever; the deadline counts from the connection. When it passes the session is answered
 * 421 and closed, but not while a message received in full is being queued: that one gets its reply first.
 */
export class SessionLimits {
  private readonly deadlines = new Map<string, NodeJS.Timeout>()
  private readonly deciding = new Map<string, Promise<unknown>>()
  private server: SMTPServer | undefined

  constructor (private readonly settings: SessionLimitSettings) {}

  attach (server: SMTPServer): void {
    this.server = server
  }

  readonly onConnect = (session: SMTPServerSession, callback: (err?: Error | null) => void): void => {
    const client = clientIdentity(session.remoteAddress)
    let fromAddress = 0
    // The server's own set of open connections (this one included), so the count cannot drift.
    for (const c of this.server!.connections) if (clientIdentity(c.remoteAddress) === client) fromAddress++
    if (fromAddress > this.settings.maxConnectionsPerAddress) {
      callback(new SmtpReply(421, '4.7.0', 'Too many connections from your address, try again later'))
      return
    }
    const timer = setTimeout(() => this.expire(session.id), this.settings.sessionDeadlineMs)
    timer.unref()
    this.deadlines.set(session.id, timer)
    callback()
  }

  readonly onClose = (session: SMTPServerSession): void => {
    clearTimeout(this.deadlines.get(session.id))
    this.deadlines.delete(session.id)
    this.deciding.delete(session.id)
  }

  /** The session's message was received in full; `reply` settles once its answer is sent. */
  deferWhile (id: string, reply: Promise<unknown>): void {
    this.deciding.set(id, reply)
    const done = (): void => { if (this.deciding.get(id) === reply) this.deciding.delete(id) }
    reply.then(done, done)
  }

  private expire (id: string): void {
    this.deadlines.delete(id)
    const pending = this.deciding.get(id)
    if (pending !== undefined) {
      const again = (): void => { this.expire(id) }
      pending.then(again, again)
      return
    }
    for (const c of this.server!.connections) if (c.id === id) c.send(421, '4.4.2 Session time limit reached, closing connection')
  }
}
