import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface Received { path: string, headers: Record<string, string | string[] | undefined>, body: string }

/**
 * A real HTTPS server on 127.0.0.1 with a fresh self-signed certificate (openssl), recording every POST.
 * Start Outbox with OB_WEBHOOK_CA_FILE = `caFile` and OB_WEBHOOK_ALLOW_PRIVATE=true to deliver to it.
 */
export class TlsReceiver {
  readonly received: Received[] = []
  private constructor (private readonly server: Server, private readonly dir: string, readonly caFile: string) {}

  static async start (): Promise<TlsReceiver> {
    const dir = mkdtempSync(join(tmpdir(), 'ob-tls-'))
    const key = join(dir, 'key.pem')
    const cert = join(dir, 'cert.pem')
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert,
      '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' })
    const server = createServer({ key: readFileSync(key), cert: readFileSync(cert) })
    const receiver = new TlsReceiver(server, dir, cert)
    server.on('request', (req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        receiver.received.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return receiver
  }

  get url (): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`
  }

  async waitFor (match: (r: Received) => boolean, timeoutMs = 10_000): Promise<Received> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const hit = this.received.find(match)
      if (hit !== undefined) return hit
      if (Date.now() > deadline) throw new Error('no matching webhook request arrived')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  async close (): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
    rmSync(this.dir, { recursive: true, force: true })
  }
}
