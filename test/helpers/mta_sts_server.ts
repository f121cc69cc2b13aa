import { createServer, type Server } from 'node:https'
import type { Socket } from 'node:net'
import { issueCert } from './test_certs.ts'
import { testCa } from './https_receiver.ts'

/**
 * An MTA-STS policy server for tests (RFC 8461 §3.3): HTTPS on 127.0.0.1 with a certificate from the test CA for
 * every `mta-sts.<domain>` it serves, answering `/.well-known/mta-sts.txt` with the policy of the requested host
 * (`Host` header) as `text/plain`, 404 for anything else. It counts the fetches per domain.
 */
/** A policy text (served `200 text/plain`), or an answer of the test's own. */
export type PolicyAnswer = string | { status: number, headers?: Record<string, string>, body?: string }

export class MtaStsServer {
  readonly fetches = new Map<string, number>()
  private readonly sockets = new Set<Socket>()

  private constructor (private readonly server: Server, readonly port: number, private readonly policies: Map<string, PolicyAnswer>) {}

  /** `policies`: recipient domain → policy text. */
  static async start (policies: Record<string, PolicyAnswer>): Promise<MtaStsServer> {
    const byHost = new Map(Object.entries(policies).map(([d, p]) => [`mta-sts.${d}`, p]))
    const tls = issueCert([...byHost.keys()])
    let self!: MtaStsServer
    const server = createServer(tls, (req, res) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase()
      const policy = self.policies.get(host)
      if (req.url !== '/.well-known/mta-sts.txt' || policy === undefined) { res.writeHead(404).end(); return }
      const domain = host.slice('mta-sts.'.length)
      self.fetches.set(domain, (self.fetches.get(domain) ?? 0) + 1)
      if (typeof policy === 'string') res.writeHead(200, { 'content-type': 'text/plain' }).end(policy)
      else res.writeHead(policy.status, policy.headers ?? {}).end(policy.body ?? '')
    })
    server.on('connection', (s: Socket) => { self.sockets.add(s); s.once('close', () => self.sockets.delete(s)) })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    self = new MtaStsServer(server, (server.address() as { port: number }).port, byHost)
    return self
  }

  /** Serves another answer for `domain` from now on (it must be one the server started with: its certificate names it). */
  set (domain: string, answer: PolicyAnswer): void {
    this.policies.set(`mta-sts.${domain}`, answer)
  }

  async close (): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

/** A policy file's text (RFC 8461 §3.2). */
export function stsPolicy (mode: 'enforce' | 'testing' | 'none', mx: readonly string[], maxAgeS = 86_400): string {
  return ['version: STSv1', `mode: ${mode}`, ...mx.map((m) => `mx: ${m}`), `max_age: ${maxAgeS}`].join('\r\n') + '\r\n'
}

/**
 * The settings of an engine that delivers to MX hosts on this machine through the local DNS server, fetches MTA-STS
 * policies from `policies` and trusts the test CA, as a real engine trusts the public ones.
 */
export function stsEngineEnv (dnsAddress: string, outboundPort: number, policies: MtaStsServer): Record<string, string> {
  return {
    OB_DNS_SERVERS: dnsAddress,
    OB_SMTP_OUTBOUND_PORT: String(outboundPort),
    OB_SMTP_ALLOW_PRIVATE: 'true',
    OB_MTA_STS_PORT: String(policies.port),
    OB_SMTP_CA_FILE: testCa().caFile,
    OB_ROLE: 'engine'
  }
}
