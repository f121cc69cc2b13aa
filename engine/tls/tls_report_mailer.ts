import { createPrivateKey } from 'node:crypto'
import type { Resolver } from 'node:dns/promises'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { ConfigError, type Config } from '../../config/mod.ts'
import { isBlockedAddress, isLocalhostName } from '../../protocol/mod.ts'
import { TransportCache, type Destination } from '../actor/transports.ts'
import type { DkimKey } from '../actor/dkim.ts'
import { composeTlsReportMail, type TlsReportMail } from './tls_report_mail.ts'

/**
 * Sends TLS reports to `mailto:` rua (RFC 8460 §5.3) as the engine sends mail: through the relay when one is
 * configured, else to the MX hosts of the address's domain (resolved through OB_DNS_SERVERS; a host on a non-public
 * address is refused unless OB_SMTP_ALLOW_PRIVATE, as for any recipient), opportunistic STARTTLS, with the engine's
 * SMTP pools (engine/actor/transports.ts), opened for a run and closed after it.
 *
 * The outcome of one mail: `sent` (250), `failed` (a 4xx, no server answering, DNS not answering: tried again next
 * run) or `refused` (a 5xx, a domain that takes no mail, a malformed address: not tried again).
 */
export type MailOutcome = { result: 'sent' } | { result: 'failed' | 'refused', reason: string }

export const MAX_MX_TRIED = 2
/** 60 s: one report mail to one host, connection to reply; well inside the run's lock (tls_reporter.ts LOCK_MS). */
export const MAIL_TIMEOUT_MS = 60_000
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA'])
/** The address of a `mailto:` URI (RFC 6068): percent-decoded, without `?` fields; undefined when it is not one. */
export function mailtoAddress (uri: string): string | undefined {
  if (!/^mailto:/i.test(uri)) return undefined
  let address: string
  try { address = decodeURIComponent(uri.slice(7).split('?')[0]!).trim() } catch { return undefined }
  // one plain ASCII address: nothing that would add a recipient or a command to the envelope
  return /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(address) ? address : undefined
}

/** The report sender of the settings with its DKIM key read (once, at start); a key that cannot be used stops the start. */
export function reportSender (settings: Config['smtp']['reportSender']): TlsReportMailerOptions['sender'] | undefined {
  if (settings === undefined) return undefined
  try {
    const key = createPrivateKey(readFileSync(settings.dkimKeyFile, 'utf8'))
    if (key.asymmetricKeyType !== 'rsa' && key.asymmetricKeyType !== 'ed25519') throw new Error('not an RSA or Ed25519 key')
    return { from: settings.from, dkim: { domain: settings.domain, selector: settings.dkimSelector, key } }
  } catch (err) {
    const message = `must name a readable PEM private key, RSA or Ed25519 (${(err as Error).message})`
    throw new ConfigError([{ variable: 'OB_REPORT_DKIM_KEY_FILE', message }])
  }
}

export interface TlsReportMailerOptions {
  sender: { from: string, dkim: DkimKey }
  resolver: Resolver
  allowPrivate: boolean
  /** Port of MX hosts (OB_SMTP_OUTBOUND_PORT). */
  port: number
  /** OB_SMTP_RELAY's destination (transports.ts relayDestination); unset: MX hosts. */
  relay?: Destination
  ca: string[] | undefined
}

/** The addresses of a look-up; none when the name has none (a resolver that does not answer throws). */
async function orNone (lookup: Promise<string[]>): Promise<string[]> {
  try { return await lookup } catch (err) {
    if (NOT_FOUND.has((err as { code?: string }).code ?? '')) return []
    throw err
  }
}

export class TlsReportMailer {
  private pools?: TransportCache

  constructor (private readonly opts: TlsReportMailerOptions) {}

  /** Mails one report to `uri` (a `mailto:` rua). Never throws. */
  async send (uri: string, report: Omit<TlsReportMail, 'from' | 'to'>): Promise<MailOutcome> {
    const to = mailtoAddress(uri)
    if (to === undefined) return { result: 'refused', reason: `${uri} is not a mail address` }
    try {
      const dests = this.opts.relay !== undefined ? [this.opts.relay] : await this.mxDestinations(to.slice(to.lastIndexOf('@') + 1))
      if (!Array.isArray(dests)) return dests
      const { raw, messageId } = await composeTlsReportMail({ ...report, from: this.opts.sender.from, to }, this.opts.sender.dkim)
      let last = 'no MX host to try'
      for (const dest of dests) {
        this.pools ??= new TransportCache(1, this.opts.ca !== undefined ? { ca: this.opts.ca } : {})
        const sending = this.pools.get(dest).sendMail({ envelope: { from: this.opts.sender.from, to: [to] }, raw, messageId })
        let timer: NodeJS.Timeout | undefined
        try {
          // the run holds the cluster's lock: a host that stalls the session loses it, and its connection
          await Promise.race([sending, new Promise((_resolve, reject) => {
            timer = setTimeout(() => {
              this.close()
              reject(new Error(`no answer within ${MAIL_TIMEOUT_MS} ms`))
            }, MAIL_TIMEOUT_MS)
          })])
          return { result: 'sent' }
        } catch (err) {
          const e = err as { responseCode?: number, response?: string, message?: string }
          const reply = `${dest.host}: ${e.response ?? e.message ?? String(err)}`
          // a server that answered decides: its 5xx ends the report, its 4xx has it tried again next run
          if (typeof e.responseCode === 'number' && e.responseCode >= 500) return { result: 'refused', reason: reply }
          if (typeof e.responseCode === 'number' && e.responseCode >= 400) return { result: 'failed', reason: reply }
          last = reply
        } finally {
          clearTimeout(timer)
          sending.catch(() => {}) // answered after the deadline: nothing waits for it
        }
      }
      return { result: 'failed', reason: last }
    } catch (err) {
      return { result: 'failed', reason: String(err) }
    }
  }

  /** Closes the run's SMTP connections. */
  close (): void {
    this.pools?.close()
    this.pools = undefined
  }

  /** The MX hosts of `domain` (RFC 5321 §5.1: else the domain itself) as destinations, or the outcome that ends it. */
  private async mxDestinations (domain: string): Promise<Destination[] | MailOutcome> {
    let hosts: string[]
    try {
      const mx = await this.opts.resolver.resolveMx(domain)
      // RFC 7505: a single MX of `.` says the domain takes no mail
      if (mx.length === 1 && (mx[0]!.exchange === '' || mx[0]!.exchange === '.')) {
        return { result: 'refused', reason: `${domain} takes no mail (null MX)` }
      }
      hosts = mx.sort((a, b) => a.priority - b.priority).map((m) => m.exchange)
    } catch (err) {
      const code = (err as { code?: string }).code ?? ''
      if (code === 'ENOTFOUND') return { result: 'refused', reason: `${domain} does not exist` }
      if (code !== 'ENODATA') throw err
      hosts = [domain]
    }
    const dests: Destination[] = []
    let refused = 0
    for (const host of hosts.slice(0, MAX_MX_TRIED)) {
      const address = await this.address(host)
      if (address === 'refused') refused++
      else if (address !== undefined) dests.push({ host, connectTo: address, port: this.opts.port, secure: false })
    }
    if (dests.length > 0) return dests
    if (refused > 0) return { result: 'refused', reason: `the MX hosts of ${domain} are not on public addresses` }
    return { result: 'failed', reason: `the MX hosts of ${domain} have no address now` }
  }

  /** The host's first address (A, else AAAA), `refused` when it is local or not public, undefined when it has none. */
  private async address (host: string): Promise<string | 'refused' | undefined> {
    if (isIP(host) !== 0) return !this.opts.allowPrivate && isBlockedAddress(host) ? 'refused' : host
    if (!this.opts.allowPrivate && isLocalhostName(host)) return 'refused'
    let ips = await orNone(this.opts.resolver.resolve4(host))
    if (ips.length === 0) ips = await orNone(this.opts.resolver.resolve6(host))
    if (ips.length === 0) return undefined
    return !this.opts.allowPrivate && ips.some(isBlockedAddress) ? 'refused' : ips[0]
  }
}
