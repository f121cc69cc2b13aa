import { createServer, connect, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy that adds `delayMs` to every chunk in each direction, keeping their order: the delay of a slow
 * link, which the kernel here cannot add (no `netem` qdisc). It listens on `host` (a free port) and forwards to
 * `target`.
 */
export class DelayProxy {
  private readonly sockets = new Set<Socket>()

  private constructor (private readonly server: Server, readonly host: string, readonly port: number) {}

  static async start (host: string, target: { host: string, port: number }, delayMs: number): Promise<DelayProxy> {
    let proxy!: DelayProxy
    const server = createServer((client) => {
      const upstream = connect(target.port, target.host)
      for (const s of [client, upstream]) {
        proxy.sockets.add(s)
        s.once('close', () => proxy.sockets.delete(s))
        s.on('error', () => { client.destroy(); upstream.destroy() })
      }
      pipeDelayed(client, upstream, delayMs)
      pipeDelayed(upstream, client, delayMs)
    })
    await new Promise<void>((resolve) => server.listen(0, host, resolve))
    proxy = new DelayProxy(server, host, (server.address() as { port: number }).port)
    return proxy
  }

  get url (): string {
    return `http://${this.host}:${this.port}`
  }

  async close (): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

function pipeDelayed (from: Socket, to: Socket, delayMs: number): void {
  let last = 0
  from.on('data', (chunk: Buffer) => {
    // each chunk leaves delayMs after it came, and never before the one ahead of it
    last = Math.max(Date.now() + delayMs, last)
    setTimeout(() => { if (!to.destroyed) to.write(chunk) }, last - Date.now())
  })
  from.once('end', () => {
    setTimeout(() => { if (!to.destroyed) to.end() }, Math.max(0, last - Date.now()) + 1)
  })
}
