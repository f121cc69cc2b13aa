import { connect } from 'node:net';
/**
 * A bare SMTP session over a socket, for what no well-behaved client will send (bare LF endings, pipelined
 * smuggling attempts) and for watching the server's own replies (421 at shutdown).
 */
export class RawSmtp {
    socket;
    buffer = '';
    waiters = [];
    closed = false;
    constructor(socket) {
        this.socket = socket;
        socket.setEncoding('utf8');
        socket.on('data', (d) => { this.buffer += d; this.wake(); });
        socket.on('close', () => { this.closed = true; this.wake(); });
        socket.on('error', () => { });
    }
    /** The server's first reply: its 220 greeting, or the 421 that refused the connection. */
    greeting = '';
    /** `localAddress`: another loopback address (127.0.0.2, ...) to connect from, as a different client would. */
    static async open(port, opts = {}) {
        const socket = connect({ port, host: '127.0.0.1', ...opts });
        await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
        const s = new RawSmtp(socket);
        s.greeting = await s.reply();
        return s;
    }
    /** Resolves once the server has closed the connection. */
    async whenClosed(timeoutMs = 5000) {
        const deadline = Date.now() + timeoutMs;
        while (!this.closed) {
            if (Date.now() > deadline)
                throw new Error('the server did not close the connection');
            await new Promise((resolve) => { this.waiters.push(resolve); setTimeout(resolve, 100); });
        }
    }
    /** QUIT, then wait for the server to close its side (it no longer counts the session once it has). */
    async quit() {
        this.write('QUIT\r\n');
        await this.whenClosed();
    }
    wake() {
        for (const w of this.waiters.splice(0))
            w();
    }
    write(data) {
        this.socket.write(data);
    }
    /** The next complete reply (last line `NNN text`), or '' if the connection closed first. */
    async reply(timeoutMs = 5000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            const m = /^(?:\d{3}-[^\r\n]*\r\n)*\d{3} [^\r\n]*\r\n/.exec(this.buffer);
            if (m !== null) {
                this.buffer = this.buffer.slice(m[0].length);
                return m[0];
            }
            if (this.closed)
                return '';
            if (Date.now() > deadline)
                throw new Error(`no SMTP reply; buffer: ${JSON.stringify(this.buffer)}`);
            await new Promise((resolve) => { this.waiters.push(resolve); setTimeout(resolve, 100); });
        }
    }
    async command(line) {
        this.write(`${line}\r\n`);
        return await this.reply();
    }
    close() {
        this.socket.destroy();
    }
}
//# sourceMappingURL=raw_smtp.js.map