import { Resolver } from 'node:dns/promises'

/**
 * The DNS look-ups of domain health checks, bounded: each look-up gives up after `timeoutMs`, and at most
 * `concurrency` are in flight in this process whatever the number of checks running (live ones and the periodic
 * round share them), so no organisation can make the installation send a flood of queries.
 */

/** One attempt of 2 s: a health check reports a silent server as `not_checked` rather than waiting on it. */
export const HEALTH_LOOKUP_TIMEOUT_MS = 2000
/** Look-ups in flight at once per process; the rest wait their turn. */
export const HEALTH_LOOKUP_CONCURRENCY = 16

/** "No such name" and "no such record": an answer, not a failure. */
const EMPTY = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN'])

export class LookupFailedError extends Error {
  readonly code = 'health_lookup_failed'
  constructor (readonly name: string, readonly rrtype: string, readonly reason: string, opts?: ErrorOptions) {
    super(`DNS look-up of ${rrtype} ${name} failed (${reason})`, opts)
    this.name = 'LookupFailedError'
  }
}

/** What the check reads from DNS; a test may pass a table instead. Empty answer: no such name or record. */
export interface HealthDns {
  txt: (name: string) => Promise<string[]>
  mx: (name: string) => Promise<string[]>
  cname: (name: string) => Promise<string[]>
  a: (name: string) => Promise<string[]>
  aaaa: (name: string) => Promise<string[]>
  ptr: (address: string) => Promise<string[]>
  /** mailauth's resolver shape (SPF evaluation): raw answers, errors with their DNS code. */
  raw: (name: string, rrtype: string) => Promise<unknown>
}

class Gate {
  private running = 0
  private readonly waiting: Array<() => void> = []
  constructor (private readonly limit: number) {}

  async run<T> (fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve))
    this.running++
    try {
      return await fn()
    } finally {
      this.running--
      this.waiting.shift()?.()
    }
  }
}

/** Look-ups through `servers` (OB_DNS_SERVERS) or the system's resolvers, bounded as above. */
export function healthDns (
  servers: readonly string[], opts: { timeoutMs?: number, concurrency?: number } = {}
): HealthDns {
  const timeoutMs = opts.timeoutMs ?? HEALTH_LOOKUP_TIMEOUT_MS
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 })
  if (servers.length > 0) resolver.setServers([...servers])
  const gate = new Gate(opts.concurrency ?? HEALTH_LOOKUP_CONCURRENCY)
  // c-ares' own timeout covers one attempt; the race is the bound should it retry or hang on a socket.
  const bounded = async <T>(fn: () => Promise<T>): Promise<T> => await gate.run(async () => {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' })) }, timeoutMs + 500)
    })
    try {
      return await Promise.race([fn(), late])
    } finally {
      clearTimeout(timer)
    }
  })
  const list = async (name: string, rrtype: string, fn: () => Promise<string[]>): Promise<string[]> => {
    try {
      return await bounded(fn)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error'
      if (EMPTY.has(code)) return []
      throw new LookupFailedError(name, rrtype, code, { cause: err })
    }
  }
  const lower = (names: string[]): string[] => names.map((n) => n.replace(/\.$/, '').toLowerCase())
  return {
    txt: async (name) => await list(name, 'TXT', async () => (await resolver.resolveTxt(name)).map((c) => c.join(''))),
    mx: async (name) => await list(name, 'MX', async () =>
      (await resolver.resolveMx(name)).map((m) => `${m.priority} ${m.exchange.replace(/\.$/, '')}`.toLowerCase())),
    cname: async (name) => await list(name, 'CNAME', async () => lower(await resolver.resolveCname(name))),
    a: async (name) => await list(name, 'A', async () => await resolver.resolve4(name)),
    aaaa: async (name) => await list(name, 'AAAA', async () => await resolver.resolve6(name)),
    ptr: async (address) => await list(address, 'PTR', async () => lower(await resolver.reverse(address))),
    raw: async (name, rrtype) => await bounded(async () => await resolver.resolve(name, rrtype as 'TXT'))
  }
}
