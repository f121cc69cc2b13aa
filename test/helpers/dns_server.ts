import { createSocket, type Socket } from 'node:dgram'

/**
 * A small authoritative DNS server over UDP for tests: answers A, AAAA, MX, TXT, PTR and CNAME from a table (a CNAME
 * is answered to a CNAME query only, not followed for other types), NXDOMAIN for a name
 * in no table, and an empty answer (NODATA) for a known name without records of the type asked.
 * Point `OB_DNS_SERVERS=127.0.0.1:<port>` at it.
 */
export interface DnsTable {
  A?: Record<string, string[]>
  /** IPv6 literals in hex groups (`::1`, `2001:db8::25`); no embedded dotted quad. */
  AAAA?: Record<string, string[]>
  MX?: Record<string, Array<{ exchange: string, priority: number }>>
  TXT?: Record<string, string[]>
  /** Reverse DNS, by the reversed name (`10.2.0.192.in-addr.arpa`) → host names. */
  PTR?: Record<string, string[]>
  /** name → the one name it is an alias of. */
  CNAME?: Record<string, string>
}

const TYPE = { A: 1, CNAME: 5, PTR: 12, MX: 15, TXT: 16, AAAA: 28 } as const

function encodeName (name: string): Buffer {
  const parts = name.replace(/\.$/, '').split('.').filter(Boolean)
  return Buffer.concat([...parts.map((p) => Buffer.concat([Buffer.from([p.length]), Buffer.from(p)])), Buffer.from([0])])
}

/** The 16 bytes of an IPv6 address written in hex groups, `::` standing for the zero groups left out. */
function ipv6Bytes (ip: string): Buffer {
  const [head, tail] = ip.includes('::') ? ip.split('::') as [string, string] : [ip, undefined]
  const h = head === '' ? [] : head.split(':')
  const t = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? h : [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t]
  if (groups.length !== 8) throw new Error(`dns_server: not an IPv6 address in hex groups: ${ip}`)
  const out = Buffer.alloc(16)
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2))
  return out
}

function readName (buf: Buffer, offset: number): { name: string, end: number } {
  const labels: string[] = []
  let i = offset
  while (buf[i]! !== 0) {
    const len = buf[i]!
    labels.push(buf.subarray(i + 1, i + 1 + len).toString())
    i += len + 1
  }
  return { name: labels.join('.').toLowerCase(), end: i + 1 }
}

function rr (type: number, rdata: Buffer): Buffer {
  const head = Buffer.alloc(12)
  head.writeUInt16BE(0xc00c, 0) // pointer to the question name
  head.writeUInt16BE(type, 2)
  head.writeUInt16BE(1, 4) // IN
  head.writeUInt32BE(5, 6) // TTL 5 s
  head.writeUInt16BE(rdata.length, 10)
  return Buffer.concat([head, rdata])
}

export class DnsServer {
  /** Every answer is sent this long after its query (a slow or distant name server); 0 answers at once. */
  delayMs = 0
  /** Every question asked, `<TYPE> <name>` (`TXT _mta-sts.example.test`), in order. */
  readonly queries: string[] = []

  private constructor (private readonly socket: Socket, readonly port: number, public table: DnsTable) {}

  static async start (table: DnsTable): Promise<DnsServer> {
    const socket = createSocket('udp4')
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
    const server = new DnsServer(socket, socket.address().port, table)
    socket.on('message', (msg, rinfo) => {
      let answer: Buffer
      try {
        answer = server.answer(msg)
      } catch { return } // malformed query: no answer, as a real server under garbage
      const send = (): void => {
        try {
          socket.send(answer, rinfo.port, rinfo.address)
        } catch { /* closed while the answer waited */ }
      }
      if (server.delayMs > 0) setTimeout(send, server.delayMs).unref()
      else send()
    })
    return server
  }

  get address (): string {
    return `127.0.0.1:${this.port}`
  }

  private answer (query: Buffer): Buffer {
    const { name, end } = readName(query, 12)
    const qtype = query.readUInt16BE(end)
    this.queries.push(`${Object.entries(TYPE).find(([, v]) => v === qtype)?.[0] ?? String(qtype)} ${name}`)
    const answers: Buffer[] = []
    if (qtype === TYPE.A) {
      for (const ip of this.table.A?.[name] ?? []) answers.push(rr(TYPE.A, Buffer.from(ip.split('.').map(Number))))
    } else if (qtype === TYPE.AAAA) {
      for (const ip of this.table.AAAA?.[name] ?? []) answers.push(rr(TYPE.AAAA, ipv6Bytes(ip)))
    } else if (qtype === TYPE.MX) {
      for (const mx of this.table.MX?.[name] ?? []) {
        const pref = Buffer.alloc(2)
        pref.writeUInt16BE(mx.priority)
        answers.push(rr(TYPE.MX, Buffer.concat([pref, encodeName(mx.exchange)])))
      }
    } else if (qtype === TYPE.PTR) {
      for (const host of this.table.PTR?.[name] ?? []) answers.push(rr(TYPE.PTR, encodeName(host)))
    } else if (qtype === TYPE.CNAME) {
      const target = this.table.CNAME?.[name]
      if (target !== undefined) answers.push(rr(TYPE.CNAME, encodeName(target)))
    } else if (qtype === TYPE.TXT) {
      for (const txt of this.table.TXT?.[name] ?? []) {
        const chunks: Buffer[] = []
        for (let i = 0; i < txt.length || i === 0; i += 255) {
          const part = Buffer.from(txt.slice(i, i + 255))
          chunks.push(Buffer.from([part.length]), part)
        }
        answers.push(rr(TYPE.TXT, Buffer.concat(chunks)))
      }
    }
    const known = [this.table.A, this.table.AAAA, this.table.MX, this.table.TXT, this.table.PTR, this.table.CNAME]
      .some((t) => t !== undefined && name in t)
    const header = Buffer.alloc(12)
    header.writeUInt16BE(query.readUInt16BE(0), 0) // id
    header.writeUInt16BE(0x8400 | (known ? 0 : 3), 2) // response, authoritative, NXDOMAIN when unknown
    header.writeUInt16BE(1, 4)
    header.writeUInt16BE(answers.length, 6)
    return Buffer.concat([header, query.subarray(12, end + 4), ...answers])
  }

  async close (): Promise<void> {
    await new Promise<void>((resolve) => this.socket.close(() => resolve()))
  }
}
