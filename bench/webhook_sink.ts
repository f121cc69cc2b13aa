import { createServer } from 'node:https'
import { parentPort, workerData } from 'node:worker_threads'

/**
 * The receiving side of the webhook bench, in its own thread: a healthy HTTPS server that answers 200 at once,
 * and a dead one that accepts requests and never answers. It reports how many requests each path received.
 */
const { key, cert } = workerData as { key: Buffer, cert: Buffer }
const counts = new Map<string, number>()
const healthy = createServer({ key, cert }, (req, res) => {
  req.resume()
  req.on('end', () => {
    counts.set(req.url ?? '', (counts.get(req.url ?? '') ?? 0) + 1)
    res.writeHead(200, { 'content-length': '2' })
    res.end('ok')
  })
})
healthy.keepAliveTimeout = 60_000
const dead = createServer({ key, cert }, (req) => { req.resume() })
healthy.listen(0, '127.0.0.1', () => {
  dead.listen(0, '127.0.0.1', () => {
    parentPort!.postMessage({ healthy: (healthy.address() as { port: number }).port, dead: (dead.address() as { port: number }).port })
  })
})
parentPort!.on('message', (m: string) => {
  if (m === 'count') {
    let total = 0
    for (const v of counts.values()) total += v
    parentPort!.postMessage({ total })
  } else if (m === 'reset') {
    counts.clear()
  } else if (m === 'close') {
    healthy.closeAllConnections()
    dead.closeAllConnections()
    healthy.close()
    dead.close()
    parentPort!.close()
  }
})
