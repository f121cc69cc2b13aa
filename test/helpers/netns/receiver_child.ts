import { readFileSync } from 'node:fs'
import { createServer } from 'node:https'

/**
 * An HTTPS webhook receiver in its own process, to run on a host of its own (`ip netns exec`): it listens on
 * OB_RX_HOST:OB_RX_PORT with the certificate OB_RX_CERT/OB_RX_KEY, answers every request 200, and prints each
 * one as a JSON line `{"path", "body", "at"}` on stdout, after `ready`.
 */
const env = process.env
const server = createServer({ key: readFileSync(env.OB_RX_KEY!), cert: readFileSync(env.OB_RX_CERT!) }, (req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    process.stdout.write(JSON.stringify({ path: req.url, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }) + '\n')
    res.writeHead(200)
    res.end('ok')
  })
})
server.listen(Number(env.OB_RX_PORT), env.OB_RX_HOST, () => { process.stdout.write('ready\n') })
process.once('SIGTERM', () => { server.close(); process.exit(0) })
