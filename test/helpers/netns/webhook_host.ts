import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { writeFileSync } from 'node:fs'
import { testCa } from '../https_receiver.ts'
import { HostProcess } from './host_process.ts'
import type { Host } from './net.ts'

const RECEIVER_CHILD = fileURLToPath(new URL('./receiver_child.js', import.meta.url))
export const RECEIVER_PORT = 8443

export interface ReceivedEvent { path: string, body: string, at: number }

/**
 * The HTTPS webhook receiver on a host of its own (receiver_child.ts), with a certificate for the host's address
 * signed by the tests' CA (https_receiver.ts), so engines trust it through OB_WEBHOOK_CA_FILE. Every request it
 * got is in `requests`.
 */
export class WebhookHost {
  private constructor (readonly host: Host, readonly process: HostProcess, readonly requests: ReceivedEvent[]) {}

  static async start (host: Host): Promise<WebhookHost> {
    const ca = testCa()
    const name = `rx-${host.address}`
    const run = (args: string[]): void => { execFileSync('openssl', args, { cwd: ca.dir, stdio: 'ignore' }) }
    writeFileSync(join(ca.dir, `${name}.cnf`), `subjectAltName=IP:${host.address}\nextendedKeyUsage=serverAuth\n`)
    run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`,
      '-subj', `/CN=${host.address}`])
    run(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`,
      '-days', '2', '-extfile', `${name}.cnf`])
    const requests: ReceivedEvent[] = []
    const p = await HostProcess.start(host, 'webhook receiver', process.execPath, [RECEIVER_CHILD], {
      env: {
        OB_RX_HOST: host.address, OB_RX_PORT: String(RECEIVER_PORT),
        OB_RX_KEY: join(ca.dir, `${name}.key`), OB_RX_CERT: join(ca.dir, `${name}.pem`)
      },
      ready: /ready\n/,
      onLine: (line) => { if (line.startsWith('{')) requests.push(JSON.parse(line) as ReceivedEvent) }
    })
    return new WebhookHost(host, p, requests)
  }

  url (path = '/hook'): string {
    return `https://${this.host.address}:${RECEIVER_PORT}${path}`
  }
}
