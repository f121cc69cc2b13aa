import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A real HTTPS webhook receiver for tests. Its CA and server certificate (for localhost, 127.0.0.1 and ::1)
 * are made at test time with the `openssl` command line tool, which the tests therefore need. It records every
 * request (raw body and headers) and answers as its script says.
 */
export interface ReceivedRequest {
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  rawBody: Buffer
  at: number
}

/**
 * What to do with the n-th request (0-based): a status, an optional delay, never answer, or answer once `until`
 * resolves (a receiver the test holds, then lets go).
 */
export interface Answer {
  status?: number, delayMs?: number, hang?: boolean, until?: Promise<unknown>, headers?: Record<string, string>
  /** The response body ('ok' when omitted). */
  body?: string
}
export type Script = (req: ReceivedRequest, n: number) => Answer

export interface TestCa { dir: string, caFile: string, key: Buffer, cert: Buffer }

let shared: TestCa | undefined

/** A CA and a server certificate signed by it, made once per test process. */
export function testCa (): TestCa {
  if (shared !== undefined) return shared
  const dir = mkdtempSync(join(tmpdir(), 'outbox-ca-'))
  const run = (args: string[]): void => { execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' }) }
  run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem',
    '-days', '2', '-subj', '/CN=Outbox Test CA', '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign'])
  run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'server.key', '-out', 'server.csr',
    '-subj', '/CN=localhost'])
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,DNS:receiver.test,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\n')
  run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2',
    '-extfile', 'ext.cnf'])
  shared = { dir, caFile: join(dir, 'ca.pem'), key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.pem')) }
  process.once('exit', () => { rmSync(dir, { recursive: true, force: true }) })
  return shared
}

export class HttpsReceiver {
  readonly requests: ReceivedRequest[] = []
  script: Script = () => ({ status: 200 })
  private readonly sockets = new Set<Socket>()
  private readonly hanging = new Set<ServerResponse>()
  private waiters: Array<() => void> = []

  private constructor (private readonly server: Server, readonly port: number) {}

  /** `port` 0 picks a free one; fault tests pass the port of a receiver they closed, to bring it back. */
  static async start (script?: Script, port = 0): Promise<HttpsReceiver> {
    const ca = testCa()
    let receiver!: HttpsReceiver
    const server = createServer({ key: ca.key, cert: ca.cert }, (req, res) => { receiver.handle(req, res) })
    server.on('connection', (s: Socket) => { receiver.sockets.add(s); s.once('close', () => receiver.sockets.delete(s)) })
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    receiver = new HttpsReceiver(server, (server.address() as { port: number }).port)
    if (script !== undefined) receiver.script = script
    return receiver
  }

  /** `https://127.0.0.1:<port><path>` */
  url (path = '/hook'): string {
    return `https://127.0.0.1:${this.port}${path}`
  }

  /** Answers with these statuses in turn, then repeats the last one. */
  statuses (...codes: number[]): void {
    this.script = (_r, n) => ({ status: codes[Math.min(n, codes.length - 1)]! })
  }

  private handle (req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const r: ReceivedRequest = {
        method: req.method ?? '', path: req.url ?? '', headers: req.headers, rawBody: Buffer.concat(chunks), at: Date.now()
      }
      const n = this.requests.length
      this.requests.push(r)
      for (const w of this.waiters.splice(0)) w()
      const a = this.script(r, n)
      if (a.hang === true) { this.hanging.add(res); return }
      const answer = (): void => { res.writeHead(a.status ?? 200, a.headers ?? {}); res.end(a.body ?? 'ok') }
      if (a.until !== undefined) {
        this.hanging.add(res)
        void a.until.then(() => { if (this.hanging.delete(res) && !res.destroyed) answer() })
        return
      }
      if (a.delayMs !== undefined && a.delayMs > 0) setTimeout(answer, a.delayMs).unref()
      else answer()
    })
  }

  /** Requests on `path` (all when omitted). */
  on (path?: string): ReceivedRequest[] {
    return path === undefined ? this.requests : this.requests.filter((r) => r.path === path)
  }

  /** Resolves when at least `count` requests (on `path`) have arrived; rejects after `timeoutMs`. */
  async waitFor (count: number, opts: { path?: string, timeoutMs?: number } = {}): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + (opts.timeoutMs ?? 10_000)
    while (this.on(opts.path).length < count) {
      const left = deadline - Date.now()
      if (left <= 0) {
        const where = opts.path !== undefined ? ` on ${opts.path}` : ''
        throw new Error(`expected ${count} webhook requests${where}, got ${this.on(opts.path).length}`)
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200))
        this.waiters.push(() => { clearTimeout(timer); resolve() })
      })
    }
    return this.on(opts.path)
  }

  async close (): Promise<void> {
    for (const res of this.hanging) res.destroy()
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
