import { randomBytes } from 'node:crypto'
import { Resolver } from 'node:dns/promises'
import { request } from 'node:https'
import { isIP } from 'node:net'
import { gzipSync } from 'node:zlib'
import type { Logger } from 'pino'
import { isBlockedAddress } from '../../protocol/mod.ts'
import { utcDay, type TlsReportStore } from '../../stores/tls_reports/mod.ts'
import { safeLookup } from './safe_lookup.ts'
import { buildTlsReport, parseTlsRptRecord } from './tls_report.ts'

/**
 * Sends the daily TLS-RPT aggregate reports (RFC 8460 §5): for each finished UTC day of the last REPORT_DAYS with
 * counters, each policy domain's report goes to the `rua` of its `_smtp._tls` TXT record once. One engine of the
 * cluster does it at a time, under a Redis lock (TlsReportStore.lock); a domain's report is marked sent after its
 * delivery, so a sender killed half-way leaves the rest for the next run. `now` is the clock (a test's override).
 *
 * An `https:` rua gets a POST of the gzipped JSON as `application/tlsrpt+gzip` (verified TLS, OB_SMTP_CA_FILE
 * trusted, its host resolved and checked as policy hosts are, POST_TIMEOUT_MS); a 2xx answer is delivery.
 * `mailto:` rua are not sent to yet: they are logged and skipped.
 */
export const REPORT_DAYS = 7
export const LOCK_MS = 10 * 60_000 // 10 min: longer than one run of look-ups and POSTs with their timeouts
export const POST_TIMEOUT_MS = 30_000
export const MAX_REPORT_ANSWER_BYTES = 64 * 1024

export interface TlsReporterOptions {
  store: TlsReportStore
  dnsServers: readonly string[]
  allowPrivate: boolean
  ca: string[] | undefined
  /** The reporting organisation and its contact (RFC 8460 §4.4 `organization-name`, `contact-info`). */
  organization: string
  contact: string
  log: Logger
  now?: () => number
}

export interface TlsReportRun { locked: boolean, sent: Array<{ day: string, domain: string, to: string }> }

export class TlsReporter {
  private readonly resolver = new Resolver({ timeout: 5000, tries: 2 })
  private timer?: NodeJS.Timeout

  constructor (private readonly opts: TlsReporterOptions) {
    if (opts.dnsServers.length > 0) this.resolver.setServers([...opts.dnsServers])
  }

  start (everyMs: number): void {
    this.timer = setInterval(() => {
      this.run().catch((err: unknown) => { this.opts.log.warn({ err }, 'TLS report run failed; tried again later') })
    }, everyMs)
    this.timer.unref()
  }

  stop (): void { clearInterval(this.timer) }

  /** One run: the reports of finished days not sent yet, if this engine gets the lock. `now` overrides the clock. */
  async run (now = (this.opts.now ?? Date.now)()): Promise<TlsReportRun> {
    const holder = randomBytes(9).toString('base64url')
    const out: TlsReportRun = { locked: false, sent: [] }
    if (!(await this.opts.store.lock(holder, LOCK_MS))) return out
    out.locked = true
    try {
      for (let back = REPORT_DAYS; back >= 1; back--) {
        const day = utcDay(now - back * 86_400_000)
        for (const domain of await this.opts.store.domains(day)) {
          if (await this.opts.store.isSent(day, domain)) continue
          out.sent.push(...await this.report(day, domain))
        }
      }
    } finally {
      await this.opts.store.unlock(holder).catch(() => {})
    }
    return out
  }

  private async report (day: string, domain: string): Promise<TlsReportRun['sent']> {
    const counts = await this.opts.store.read(day, domain)
    let rua: string[] = []
    try {
      rua = parseTlsRptRecord((await this.resolver.resolveTxt(`_smtp._tls.${domain}`)).map((c) => c.join('')))
    } catch (err) {
      const code = (err as { code?: string }).code
      if (code !== 'ENOTFOUND' && code !== 'ENODATA') return [] // the resolver failed: asked again next run
    }
    const sent: TlsReportRun['sent'] = []
    if (counts !== undefined && rua.length > 0) {
      const report = buildTlsReport(day, domain, counts, { organization: this.opts.organization, contact: this.opts.contact })
      const body = gzipSync(JSON.stringify(report))
      for (const to of rua) {
        if (!to.toLowerCase().startsWith('https://')) {
          this.opts.log.info({ domain, day, rua: to }, 'TLS report to a mailto: address not sent (only https: is)')
          continue
        }
        try {
          await this.post(to, body, domain)
          sent.push({ day, domain, to })
        } catch (err) {
          this.opts.log.warn({ err, domain, day, rua: to }, 'TLS report not delivered')
        }
      }
      // every https: rua failed: tried again next run
      if (sent.length === 0 && rua.some((u) => u.toLowerCase().startsWith('https://'))) return sent
    }
    // sent, or nowhere to send it (no record, mailto only): done with the day's counters of the domain
    await this.opts.store.markSent(day, domain)
    return sent
  }

  private async post (to: string, body: Buffer, domain: string): Promise<void> {
    const url = new URL(to)
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    if (isIP(host) !== 0 && !this.opts.allowPrivate && isBlockedAddress(host)) throw new Error(`${host} is not a public address`)
    await new Promise<void>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        rejectUnauthorized: true,
        ...(this.opts.ca !== undefined ? { ca: this.opts.ca } : {}),
        lookup: safeLookup(this.resolver, this.opts.allowPrivate),
        agent: false,
        timeout: POST_TIMEOUT_MS,
        headers: {
          'content-type': 'application/tlsrpt+gzip',
          'content-length': String(body.length),
          'tls-report-domain': domain,
          'tls-report-submitter': this.opts.organization
        }
      }, (res) => {
        let size = 0
        res.on('data', (c: Buffer) => { size += c.length; if (size > MAX_REPORT_ANSWER_BYTES) req.destroy() })
        res.on('end', () => {
          const status = res.statusCode ?? 0
          if (status >= 200 && status < 300) resolve()
          else reject(new Error(`${to} answered HTTP ${status}`))
        })
      })
      const deadline = setTimeout(() => { req.destroy(new Error(`no answer within ${POST_TIMEOUT_MS} ms`)) }, POST_TIMEOUT_MS)
      req.once('close', () => clearTimeout(deadline))
      req.on('timeout', () => { req.destroy(new Error(`${to} stopped answering`)) })
      req.on('error', reject)
      req.end(body)
    })
  }
}
