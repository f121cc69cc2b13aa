import { createSocket } from 'node:dgram';
const TYPE = { A: 1, MX: 15, TXT: 16 };
function encodeName(name) {
    const parts = name.replace(/\.$/, '').split('.').filter(Boolean);
    return Buffer.concat([...parts.map((p) => Buffer.concat([Buffer.from([p.length]), Buffer.from(p)])), Buffer.from([0])]);
}
function readName(buf, offset) {
    const labels = [];
    let i = offset;
    while (buf[i] !== 0) {
        const len = buf[i];
        labels.push(buf.subarray(i + 1, i + 1 + len).toString());
        i += len + 1;
    }
    return { name: labels.join('.').toLowerCase(), end: i + 1 };
}
function rr(type, rdata) {
    const head = Buffer.alloc(12);
    head.writeUInt16BE(0xc00c, 0); // pointer to the question name
    head.writeUInt16BE(type, 2);
    head.writeUInt16BE(1, 4); // IN
    head.writeUInt32BE(5, 6); // TTL 5 s
    head.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([head, rdata]);
}
export class DnsServer {
    socket;
    port;
    table;
    /** Every answer is sent this long after its query (a slow or distant name server); 0 answers at once. */
    delayMs = 0;
    constructor(socket, port, table) {
        this.socket = socket;
        this.port = port;
        this.table = table;
    }
    static async start(table) {
        const socket = createSocket('udp4');
        await new Promise((resolve) => socket.bind(0, '127.0.0.1', resolve));
        const server = new DnsServer(socket, socket.address().port, table);
        socket.on('message', (msg, rinfo) => {
            let answer;
            try {
                answer = server.answer(msg);
            }
            catch {
                return;
            } // malformed query: no answer, as a real server under garbage
            const send = () => {
                try {
                    socket.send(answer, rinfo.port, rinfo.address);
                }
                catch { /* closed while the answer waited */ }
            };
            if (server.delayMs > 0)
                setTimeout(send, server.delayMs).unref();
            else
                send();
        });
        return server;
    }
    get address() {
        return `127.0.0.1:${this.port}`;
    }
    answer(query) {
        const { name, end } = readName(query, 12);
        const qtype = query.readUInt16BE(end);
        const answers = [];
        if (qtype === TYPE.A) {
            for (const ip of this.table.A?.[name] ?? [])
                answers.push(rr(TYPE.A, Buffer.from(ip.split('.').map(Number))));
        }
        else if (qtype === TYPE.MX) {
            for (const mx of this.table.MX?.[name] ?? []) {
                const pref = Buffer.alloc(2);
                pref.writeUInt16BE(mx.priority);
                answers.push(rr(TYPE.MX, Buffer.concat([pref, encodeName(mx.exchange)])));
            }
        }
        else if (qtype === TYPE.TXT) {
            for (const txt of this.table.TXT?.[name] ?? []) {
                const chunks = [];
                for (let i = 0; i < txt.length || i === 0; i += 255) {
                    const part = Buffer.from(txt.slice(i, i + 255));
                    chunks.push(Buffer.from([part.length]), part);
                }
                answers.push(rr(TYPE.TXT, Buffer.concat(chunks)));
            }
        }
        const known = [this.table.A, this.table.MX, this.table.TXT].some((t) => t !== undefined && name in t);
        const header = Buffer.alloc(12);
        header.writeUInt16BE(query.readUInt16BE(0), 0); // id
        header.writeUInt16BE(0x8400 | (known ? 0 : 3), 2); // response, authoritative, NXDOMAIN when unknown
        header.writeUInt16BE(1, 4);
        header.writeUInt16BE(answers.length, 6);
        return Buffer.concat([header, query.subarray(12, end + 4), ...answers]);
    }
    async close() {
        await new Promise((resolve) => this.socket.close(() => resolve()));
    }
}
//# sourceMappingURL=dns_server.js.map