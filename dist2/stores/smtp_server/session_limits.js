import { clientIdentity } from '../../protocol/mod.js';
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
    settings;
    replies;
    deadlines = new Map();
    /** Sessions whose message is fully received and being stored, until their reply is sent. */
    deciding = new Map();
    /** The server whose connections are counted; set once it is created. */
    server;
    constructor(settings, replies) {
        this.settings = settings;
        this.replies = replies;
    }
    attach(server) {
        this.server = server;
    }
    onConnect = (session, callback) => {
        const client = clientIdentity(session.remoteAddress);
        let fromAddress = 0;
        // The set includes this connection.
        for (const c of this.server.connections)
            if (clientIdentity(c.remoteAddress) === client)
                fromAddress++;
        if (fromAddress > this.settings.maxConnectionsPerAddress) {
            callback(this.replies.tooManyFromAddress());
            return;
        }
        const timer = setTimeout(() => this.expire(session.id), this.settings.sessionDeadlineMs);
        timer.unref();
        this.deadlines.set(session.id, timer);
        callback();
    };
    onClose = (session) => {
        clearTimeout(this.deadlines.get(session.id));
        this.deadlines.delete(session.id);
        this.deciding.delete(session.id);
    };
    /**
     * The session's message has been received in full and `reply` settles once its answer is sent: a deadline
     * passing meanwhile waits for it, so a sender is never told 421 (and retries) about a message that was kept.
     */
    deferWhile(id, reply) {
        this.deciding.set(id, reply);
        const done = () => { if (this.deciding.get(id) === reply)
            this.deciding.delete(id); };
        reply.then(done, done);
    }
    expire(id) {
        this.deadlines.delete(id);
        const pending = this.deciding.get(id);
        if (pending !== undefined) {
            const again = () => { this.expire(id); };
            pending.then(again, again);
            return;
        }
        // A 421 also closes the connection (smtp-server), whatever state the session is in.
        for (const c of this.server.connections)
            if (c.id === id)
                c.send(421, this.replies.deadlineText);
    }
}
//# sourceMappingURL=session_limits.js.map