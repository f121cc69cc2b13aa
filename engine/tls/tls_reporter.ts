import { randomBytes, randomUUID } from 'node:crypto'
import { Resolver } from 'node:dns/promises'
import { isIP } from 'node:net'
import { gzipSync } from 'node:zlib'
import type { Logger } from 'pino'
import { isBlockedAddress } from '../../protocol/mod.ts'
import { utcDay, type TlsReportStore } from '../../stores/tls_reports/mod.ts'
import { safeLookup } from './safe_lookup.ts'
import { AnswerTooLargeError, httpsCall } from './tls_https.ts'
import { buildTlsReport, parseTlsRptRecord } from './tls_report.ts'
import { TlsReportMailer, type MailOutcome, type TlsReportMailerOptions } from './tls_report_mailer.ts'

/**
 * Sends the daily TLS-RPT aggregate reports (RFC 8460 §5): for each finished UTC day of the last REPORT_DAYS with
 * counters, each policy domain's report goes to the `rua` of its `_smtp._tls` TXT record once. One engine of the
 * cluster does it at a time, under a Redis lock (TlsReportStore.lock); a domain's report is marked sent after its
 * delivery, so a sender killed half-way leaves the rest for the next run. The lock is renewed before each domain: a
 * run with many slow rua outlasts LOCK_MS, and one whose lock ran out and was taken by another engine stops, leaving
 * the rest to that engine, instead of sending the same reports beside it. `now` is the clock (a test's override).
 *
 * An `https:` rua gets a POST of the gzipped JSON as `application/tlsrpt+gzip` (verified TLS, OB_SMTP_CA_FILE
 * trusted, its host resolved and checked as policy hosts are, POST_TIMEOUT_MS); a 2xx answer is delivery.
 * A `mailto:` rua gets the report as DKIM-signed mail from the installation's report sender (tls_report_mailer.ts);
 * without one (OB_REPORT_FROM unset) it is not sent, and counted so.
 *
 * Each rua's outcome is counted (`count`). A report is tried again next run when nothing was sent and a rua failed
 * in a way that may pass later (a non-2xx answer, a 4xx reply, no server answering); otherwise the domain's report
 * of the day is marked sent.
 */
export const REPORT_DAYS = 7
export const LOCK_MS = 10 * 60_000 // 10 min from the start of each domain's report: far longer than one report's look-ups and POSTs
export const POST_TIMEOUT_MS = 30_000
export const MAX_REPORT_ANSWER_BYTES = 64 * 1024

export type TlsReportOutcome = 'sent' | 'failed' | 'refused' | 'not_configured'

export interface TlsReporterOptions {
  store: TlsReportStore
  dnsServers: readonly string[]
  allowPrivate: boolean
  ca: string[] | undefined
  /** The reporting organisation and its contact (RFC 8460 §4.4 `organization-name`, `contact-info`). */
  organization: string
  contact: string
  log: Logger
  /** The report sender's address and DKIM key, the MX port and the relay; unset: `mailto:` rua are not sent to. */
  mail?: Omit<TlsReportMailerOptions, 'resolver' | 'allowPrivate' | 'ca'>
  /** Told the outcome of each rua. */
  count?: (transport: 'https' | 'mailto', outcome: TlsReportOutcome) => void
  now?: () => number
}

/** `locked`: this run had the lock; `lost`: it stopped early because another engine had taken the lock since. */
export interface TlsReportRun { locked: boolean, lost: boolean, sent: Array<{ day: string, domain: string, to: string }> }

type Outcome = MailOutcome | { result: 'not_configured' }
const SENT: Outcome = { result: 'sent' }

export class TlsReporter {
  private readonly resolver = new Resolver({ timeout: 5000, tries: 2 })
  private readonly mailer?: TlsReportMailer
  private timer?: NodeJS.Timeout

  constructor (private readonly opts: TlsReporterOptions) {
    if (opts.dnsServers.length > 0) this.resolver.setServers([...opts.dnsServers])
    if (opts.mail !== undefined) {
      this.mailer = new TlsReportMailer({ ...opts.mail, resolver: this.resolver, allowPrivate: opts.allowPrivate, ca: opts.ca })
    }
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
    const out: TlsReportRun = { locked: false, lost: false, sent: [] }
    if (!(await this.opts.store.lock(holder, LOCK_MS))) return out
    out.locked = true
    try {
      for (let back = REPORT_DAYS; back >= 1 && !out.lost; back--) await this.reportDay(utcDay(now - back * 86_400_000), holder, out)
    } finally {
      this.mailer?.close()
      await this.opts.store.unlock(holder).catch(() => {})
    }
    return out
  }

  /** The reports of one day's domains, into `out`; stops, setting `out.lost`, when the lock is no longer `holder`'s. */
  private async reportDay (day: string, holder: string, out: TlsReportRun): Promise<void> {
    for (const domain of await this.opts.store.domains(day)) {
      if (await this.opts.store.isSent(day, domain)) continue
      if (!(await this.opts.store.renew(holder, LOCK_MS))) {
        out.lost = true
        this.opts.log.warn({ day, domain }, 'TLS report run stopped: its lock ran out and another engine holds it now')
        return
      }
      out.sent.push(...await this.report(day, domain))
    }
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
    const failures: Array<{ to: string, result: 'failed' | 'refused', reason?: string }> = []
    let retry = false
    if (counts !== undefined && rua.length > 0) {
      const uniqueId = randomUUID()
      const report = buildTlsReport(day, domain, counts, { organization: this.opts.organization, contact: this.opts.contact }, uniqueId)
      const gzip = gzipSync(JSON.stringify(report))
      for (const to of rua) {
        const https = to.toLowerCase().startsWith('https://')
        const outcome: Outcome = https
          ? await this.post(to, gzip, domain).then(() => SENT, (err: unknown) => ({ result: 'failed', reason: String(err) }))
          : await this.mail(to, {
            domain,
            submitter: this.opts.organization,
            reportId: report['report-id'],
            uniqueId,
            begin: Date.parse(report['date-range']['start-datetime']),
            end: Date.parse(report['date-range']['end-datetime']),
            gzip
          })
        this.opts.count?.(https ? 'https' : 'mailto', outcome.result)
        if (outcome.result === 'sent') sent.push({ day, domain, to })
        else if (outcome.result === 'failed') retry = true
        if (outcome.result === 'failed' || outcome.result === 'refused') {
          failures.push({ to, result: outcome.result, reason: outcome.reason })
        }
      }
    }
    // a rua that may take it later, and none took it: tried again next run (once one took it, the day is done)
    const again = sent.length === 0 && retry
    for (const f of failures) {
      this.opts.log.warn({ domain, day, rua: f.to, reason: f.reason }, f.result === 'failed' && again
        ? 'TLS report not delivered; tried again next run'
        : 'TLS report not delivered; not tried again')
    }
    if (again) return sent
    // sent, or nowhere to send it (no record, refused, no report sender): done with the day's counters of the domain
    await this.opts.store.markSent(day, domain)
    return sent
  }

  private async mail (to: string, report: Parameters<TlsReportMailer['send']>[1]): Promise<Outcome> {
    if (this.mailer !== undefined) return await this.mailer.send(to, report)
    this.opts.log.info({ domain: report.domain, rua: to }, 'TLS report to a mailto: address not sent: no report sender (OB_REPORT_FROM)')
    return { result: 'not_configured' }
  }

  private async post (to: string, body: Buffer, domain: string): Promise<void> {
    const url = new URL(to)
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    if (isIP(host) !== 0 && !this.opts.allowPrivate && isBlockedAddress(host)) throw new Error(`${host} is not a public address`)
    await httpsCall(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/tlsrpt+gzip',
        'tls-report-domain': domain,
        'tls-report-submitter': this.opts.organization
      },
      body,
      timeoutMs: POST_TIMEOUT_MS,
      maxBytes: MAX_REPORT_ANSWER_BYTES,
      lookup: safeLookup(this.resolver, this.opts.allowPrivate),
      ca: this.opts.ca,
      check: (status) => { if (status < 200 || status >= 300) throw new Error(`${to} answered HTTP ${status}`) }
    }).catch((err: unknown) => {
      // the status decided: an answer too long to read to its end after a 2xx is still a delivery
      if (!(err instanceof AnswerTooLargeError)) throw err
    })
  }
}
