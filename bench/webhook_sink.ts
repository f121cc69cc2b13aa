import { createServer } from 'node:https'
import { parentPort, workerData } from 'node:worker_threads'

/**
 * The receiving side of the webhook bench, in its own thread: two healthy HTTPS servers that answer 200 at
 * once, and a dead one that accepts requests and never answers. It reports how many requests a path received.
 */
const { key, cert } = workerData as { key: Buffer, cert: Buffer }
const counts = new Map<string, number>()
const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void => {
  req.resume()
  req.on('end', () => {
    counts.set(req.url ?? '', (counts.get(req.url ?? '') ?? 0) + 1)
    res.writeHead(200, { 'content-length': '2' })
    res.end('ok')
  })
}
const healthy = createServer({ key, cert }, handler)
const other = createServer({ key, cert }, handler)
healthy.keepAliveTimeout = 60_000
other.keepAliveTimeout = 60_000
const dead = createServer({ key, cert }, (req) => { req.resume() })
healthy.listen(0, '127.0.0.1', () => {
  dead.listen(0, '127.0.0.1', () => {
    other.listen(0, '127.0.0.1', () => {
      const port = (s: typeof dead): number => (s.address() as { port: number }).port
      parentPort!.postMessage({ healthy: port(healthy), other: port(other), dead: port(dead) })
    })
  })
})
parentPort!.on('message', (m: string) => {
  if (m.startsWith('count ')) {
    parentPort!.postMessage({ total: counts.get(m.slice(6)) ?? 0 })
  } else if (m === 'reset') {
    counts.clear()
  } else if (m === 'close') {
    healthy.closeAllConnections()
    dead.closeAllConnections()
    other.closeAllConnections()
    other.close()
    healthy.close()
    dead.close()
    parentPort!.close()
  }
})
