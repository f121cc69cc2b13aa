import { createServer } from 'node:https'
import { readFileSync } from 'node:fs'
import { verifySignature } from '../webhooks/sign.ts'

/**
 * The HTTPS webhook receiver of the end-to-end bench, in its own process so that its CPU time is its own. It
 * checks each request's signature (the secret comes in OB_BENCH_WEBHOOK_SECRET), answers 200, and counts the
 * `delivered` events per message id. IPC: sends `{port}` once listening; answers `'count'` with
 * `{received, lastAt}` (signed `delivered` requests so far, time of the last one) and `'report'` with
 * `{perMessage, bad}` (message id → requests, requests with a bad signature or another event type).
 */
const [keyFile, certFile] = process.argv.slice(2)
const secret = process.env.OB_BENCH_WEBHOOK_SECRET ?? ''
const perMessage = new Map<string, number>()
let received = 0
let bad = 0
let lastAt = 0

const server = createServer({ key: readFileSync(keyFile!), cert: readFileSync(certFile!) }, (req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    res.writeHead(200, { 'content-length': '2' })
    res.end('ok')
    const body = Buffer.concat(chunks)
    const sig = req.headers['x-service-signature']
    let event: { type?: string, data?: { message_id?: string } } | undefined
    try { event = JSON.parse(body.toString('utf8')) } catch { event = undefined }
    const messageId = event?.data?.message_id
    const signed = verifySignature(body, typeof sig === 'string' ? sig : undefined, secret).ok
    if (!signed || event?.type !== 'delivered' || messageId === undefined) {
      bad++
      return
    }
    perMessage.set(messageId, (perMessage.get(messageId) ?? 0) + 1)
    received++
    lastAt = Date.now()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => { process.send!({ port: (server.address() as { port: number }).port }) })

process.on('message', (m) => {
  if (m === 'count') process.send!({ received, lastAt })
  else if (m === 'report') process.send!({ perMessage: [...perMessage], bad })
  else if (m === 'close') {
    server.closeAllConnections()
    server.close(() => process.exit(0))
  }
})
