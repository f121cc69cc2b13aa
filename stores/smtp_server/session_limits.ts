import type { SMTPServer, SMTPServerSession } from 'smtp-server'
import { clientIdentity } from '../../protocol/mod.ts'

export interface SessionLimitSettings {
  /** Sessions open at once from one client address (an IPv6 client counts by its /64). */
  readonly maxConnectionsPerAddress: number
  /** How long a session may last from its connection, whatever it sends. */
  readonly sessionDeadlineMs: number
}

/** The replies of one server, in its own style (with or without enhanced status codes). */
export interface SessionLimitReplies {
  /** The error smtp-server answers (421) to a connection over the per-address cap. */
  tooManyFromAddress: () => Error
  /** The text of the 421 sent when a session's deadline passes. */
  deadlineText: string
}

/**
 * The per-address cap and the session deadline of an SMTP server (inbound and submission), as smtp-server hooks;
 * the total cap is smtp-server's own `maxClients`.
 *
 * smtp-server's idle timeout restarts with every byte, so a client trickling one byte a minute would hold a session
 * (and its descriptor and parser) for ever; the deadline is measured from the connection and nothing extends it.
 * When it passes the session is answered `421` and closed, even in the middle of DATA (the client retries later,
 * as 421 tells it to), but not while a message received in full is being stored: that one gets its reply first.
 *
 * The per-address count is taken from the server's own set of open connections, so it cannot drift from what is
 * really open. An IPv6 client counts by its /64, as for failed authentications (`clientIdentity`).
 */
export class SessionLimits {
  private readonly deadlines = new Map<string, NodeJS.Timeout>()
  /** Sessions whose message is fully received and being stored, until their reply is sent. */
  private readonly deciding = new Map<string, Promise<unknown>>()
  /** The server whose connections are counted; set once it is created. */
  private server: SMTPServer | undefined

  constructor (private readonly settings: SessionLimitSettings, private readonly replies: SessionLimitReplies) {}

  attach (server: SMTPServer): void {
    this.server = server
  }

  readonly onConnect = (session: SMTPServerSession, callback: (err?: Error | null) => void): void => {
    const client = clientIdentity(session.remoteAddress)
    let fromAddress = 0
    // The set includes this connection.
    for (const c of this.server!.connections) if (clientIdentity(c.remoteAddress) === client) fromAddress++
    if (fromAddress > this.settings.maxConnectionsPerAddress) {
      callback(this.replies.tooManyFromAddress())
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

  /**
   * The session's message has been received in full and `reply` settles once its answer is sent: a deadline
   * passing meanwhile waits for it, so a sender is never told 421 (and retries) about a message that was kept.
   */
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
    // A 421 also closes the connection (smtp-server), whatever state the session is in.
    for (const c of this.server!.connections) if (c.id === id) c.send(421, this.replies.deadlineText)
  }
}
