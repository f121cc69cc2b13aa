import { createServer } from 'node:https'
import { parentPort, workerData } from 'node:worker_threads'
import { verifySignature } from '../webhooks/sign.ts'

/**
 * The receiving end of the inbound bench, on its own thread: an HTTPS server that checks each webhook's
 * signature and counts the distinct messages whose `inbound.received` arrived. The main thread arms it with the
 * webhook secret and the number of messages to wait for; it answers `{ received, bad }` once that many arrived.
 */
const { key, cert } = workerData as { key: Buffer, cert: Buffer }
interface Round { secret: string, count: number, seen: Set<string>, bad: number }
let round: Round | undefined

const server = createServer({ key, cert }, (req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    res.writeHead(200, { 'content-length': '2' })
    res.end('ok')
    const r = round
    if (r === undefined) return
    const body = Buffer.concat(chunks)
    const sig = req.headers['x-service-signature']
    let event: { type?: string, data?: { message_id?: string } } | undefined
    try { event = JSON.parse(body.toString('utf8')) } catch { event = undefined }
    const messageId = event?.data?.message_id
    const signed = verifySignature(body, typeof sig === 'string' ? sig : undefined, r.secret).ok
    if (!signed || event?.type !== 'inbound.received' || messageId === undefined) {
      r.bad++
      return
    }
    r.seen.add(messageId)
    if (r.seen.size === r.count) parentPort!.postMessage({ received: r.seen.size, bad: r.bad })
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => { parentPort!.postMessage({ port: (server.address() as { port: number }).port }) })

parentPort!.on('message', (m: { expect?: number, secret?: string, close?: true }) => {
  if (m.close === true) {
    server.closeAllConnections()
    server.close()
    parentPort!.close()
    return
  }
  round = { secret: m.secret!, count: m.expect!, seen: new Set(), bad: 0 }
})
