import type { Logger } from 'pino'
import type { DomainRecord } from '../protocol/mod.ts'
import { dmarcReportAddress, type InboundJob } from '../protocol/mod.ts'
import type { ControlPlane } from '../stores/control_plane/mod.ts'
import { DMARC_REPORTS_PER_DOMAIN_DAY, type DmarcSummaries } from '../stores/dmarc/mod.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'
import { SmtpReply } from '../stores/smtp_server/mod.ts'
import type { AnalysisPool } from './analysis_pool.ts'
import { DMARC_LIMITS } from './dmarc_mail.ts'

/**
 * Reports being read at once by this process; one more is answered 451 (the reporter retries). Each holds at most
 * DMARC_LIMITS.messageBytes of message and xmlBytes of XML, so this bounds the memory reports can take.
 */
export const DMARC_IN_FLIGHT = 8
/** A report whose date range begins longer ago than this (or in the future) is refused: no reporter is that late. */
const MAX_REPORT_AGE_MS = 62 * 86_400_000
const DAY_MS = 86_400_000

/** A reporter's text put in a reply: printable ASCII only, bounded (it is the sender's own text). */
function shown (s: string): string {
  return s.replace(/[^\x20-\x7e]/g, '?').slice(0, 80)
}

export interface DmarcIntakeDeps {
  cp: ControlPlane
  analysis: AnalysisPool
  summaries: DmarcSummaries
  metrics: OutboxMetrics
  log: Logger
}

/**
 * DMARC aggregate reports mailed to `dmarc@bounces.<domain>`, taken while the SMTP session waits: the reporter is
 * told at the end of DATA whether its report was added (250) or why not (5xx), so nothing is kept that is not
 * summarised. The message is read on an analysis thread (inbound/dmarc_mail.ts; the SMTP sessions keep being
 * answered meanwhile), then checked: the report's policy domain must be a domain verified by the organisation the
 * address belongs to, or the report is refused and counted (`other_organisation`): a report can only ever add to
 * its own organisation's summaries. Every outcome is counted in `outbox_dmarc_reports_total{result}`.
 */
export class DmarcIntake {
  private inFlight = 0

  constructor (private readonly deps: DmarcIntakeDeps) {}

  /** At RCPT TO: a refusal when the domain took all the reports it takes today. Redis failing lets it through. */
  async admit (domain: DomainRecord): Promise<SmtpReply | undefined> {
    try {
      if (await this.deps.summaries.takenToday(domain.id) < DMARC_REPORTS_PER_DOMAIN_DAY) return undefined
    } catch (err) {
      this.deps.log.warn({ err, domain: domain.name }, 'DMARC report limit not checked: Redis failed; the report is read')
      return undefined
    }
    return this.refuse('rate_limited', 550, '5.7.1', `${dmarcReportAddress(domain.name)} has taken all the DMARC reports it ` +
      `takes today (${DMARC_REPORTS_PER_DOMAIN_DAY})`, { domain: domain.name })
  }

  /** A message past DMARC_LIMITS.messageBytes, seen by the SMTP listener. */
  tooLarge (domain: DomainRecord): SmtpReply {
    return this.refuse('too_large', 552, '5.3.4', `DMARC report message larger than ${DMARC_LIMITS.messageBytes} bytes`,
      { domain: domain.name })
  }

  /**
   * Reads and adds the report of a message received for `domain`'s report address: the text of the 250, or a
   * rejection with the SmtpReply to give.
   */
  async take (raw: Buffer, domain: DomainRecord, job: InboundJob): Promise<string> {
    if (this.inFlight >= DMARC_IN_FLIGHT) {
      throw this.refuse('busy', 451, '4.3.2', 'Too many DMARC reports being read at once, try again later', { domain: domain.name })
    }
    this.inFlight++
    try {
      return await this.read(raw, domain, job)
    } finally {
      this.inFlight--
    }
  }

  private async read (raw: Buffer, domain: DomainRecord, job: InboundJob): Promise<string> {
    const { cp, log } = this.deps
    const analysis = await this.deps.analysis.analyze({ raw, job, routed: false, withContent: false, reports: false, dmarc: true })
      .catch((err: unknown) => {
        throw new SmtpReply(451, 'Temporary local problem reading the DMARC report, try again later', { enhanced: '4.3.0', cause: err })
      })
    const read = analysis.dmarc!
    if (!read.ok) {
      throw this.refuse(read.code, read.code === 'malformed' ? 550 : 552, read.code === 'malformed' ? '5.6.0' : '5.3.4', read.text,
        { id: job.id, domain: domain.name })
    }
    const report = read.report
    const fields = { id: job.id, domain: domain.name, reporter: report.reporter, report_id: report.report_id, about: report.domain }
    const owner = cp.domainOwner(report.domain)
    if (owner === undefined || owner.org_id !== domain.org_id) {
      // most likely a forgery, or a reporter's mistake: either way it never reaches another organisation's summary
      log.warn({ kind: 'security', event: 'dmarc_report.refused', ...fields, org_id: domain.org_id },
        'DMARC report about another organisation\'s domain refused')
      throw this.refuse('other_organisation', 550, '5.7.1', `This DMARC report is about ${shown(report.domain)}, which is not a ` +
        `domain of the organisation ${dmarcReportAddress(domain.name)} belongs to`)
    }
    const now = Date.now()
    if (report.begin * 1000 < now - MAX_REPORT_AGE_MS || report.begin * 1000 > now + DAY_MS) {
      throw this.refuse('malformed', 550, '5.6.0', 'DMARC report date range does not begin within the last 62 days', fields)
    }
    const result = await this.deps.summaries.add(owner.id, report).catch((err: unknown) => {
      throw new SmtpReply(451, 'Temporary local problem storing the DMARC report, try again later', { enhanced: '4.3.0', cause: err })
    })
    if (result === 'rate_limited') {
      throw this.refuse('rate_limited', 550, '5.7.1', `${dmarcReportAddress(domain.name)} has taken all the DMARC reports it takes ` +
        `today (${DMARC_REPORTS_PER_DOMAIN_DAY})`, fields)
    }
    this.deps.metrics.dmarcReports[result === 'added' ? 'accepted' : 'duplicate'].inc()
    log.info({ ...fields, records: report.records, skipped: report.skipped, result }, 'DMARC report taken')
    const what = `DMARC report ${shown(report.report_id)} from ${shown(report.reporter)}`
    return result === 'added' ? `${what} accepted (${report.records} records)` : `${what} already received`
  }

  private refuse (
    result: 'other_organisation' | 'rate_limited' | 'too_large' | 'too_many_records' | 'malformed' | 'busy',
    code: number, enhanced: string, text: string, fields?: Record<string, unknown>
  ): SmtpReply {
    this.deps.metrics.dmarcReports[result].inc()
    if (fields !== undefined) this.deps.log.info({ ...fields, result }, 'DMARC report refused')
    return new SmtpReply(code, text, { enhanced })
  }
}
