import MailComposer from 'nodemailer/lib/mail-composer'
import { dkimBodyHash, dkimSignatures, type DkimKey } from '../actor/dkim.ts'

/**
 * A TLS report as mail (RFC 8460 §5.3): `multipart/report; report-type=tlsrpt` with a short text part and the
 * gzipped JSON as an `application/tlsrpt+gzip` attachment named as §5.1 says, the `TLS-Report-Domain` and
 * `TLS-Report-Submitter` headers, the subject §5.3 prescribes, and a DKIM signature of the sender's domain (which
 * the RFC requires: a receiver drops an unsigned report). Composed by nodemailer, signed by the engine's DKIM glue
 * over mailauth (engine/actor/dkim.ts), as any message of the engine is.
 */
export interface TlsReportMail {
  /** The installation's report sender (OB_REPORT_FROM) and the rua's address. */
  from: string
  to: string
  /** The policy domain the report is about, and the submitter (the reporting organisation's domain). */
  domain: string
  submitter: string
  /** The report's `report-id`, and the unique part of the file name. */
  reportId: string
  uniqueId: string
  /** The report's `date-range`, in ms since the epoch. */
  begin: number
  end: number
  /** The gzipped JSON report. */
  gzip: Buffer
}

/** `<submitter>!<policy-domain>!<begin-timestamp>!<end-timestamp>!<unique-id>.json.gz` (RFC 8460 §5.1), in seconds. */
export function tlsReportFilename (m: Pick<TlsReportMail, 'submitter' | 'domain' | 'begin' | 'end' | 'uniqueId'>): string {
  const s = (ms: number): number => Math.floor(ms / 1000)
  return `${m.submitter}!${m.domain}!${s(m.begin)}!${s(m.end)}!${m.uniqueId}.json.gz`
}

/** `Report Domain: <domain> Submitter: <submitter> Report-ID: <<id>>` (RFC 8460 §5.3). */
export function tlsReportSubject (m: Pick<TlsReportMail, 'domain' | 'submitter' | 'reportId'>): string {
  return `Report Domain: ${m.domain} Submitter: ${m.submitter} Report-ID: <${m.reportId}>`
}

/** The signed bytes of the report mail and its Message-ID. */
export async function composeTlsReportMail (m: TlsReportMail, dkim: DkimKey): Promise<{ raw: Buffer, messageId: string }> {
  const messageId = `<${m.uniqueId}.tlsrpt@${dkim.domain}>`
  const root = new MailComposer({
    from: m.from,
    to: m.to,
    subject: tlsReportSubject(m),
    messageId,
    date: new Date(),
    headers: { 'TLS-Report-Domain': m.domain, 'TLS-Report-Submitter': m.submitter },
    text: `This is an aggregate TLS report (RFC 8460) from ${m.submitter} about the TLS sessions with ${m.domain} ` +
      `from ${new Date(m.begin).toISOString()} to ${new Date(m.end).toISOString()}.\r\n`,
    attachments: [{ filename: tlsReportFilename(m), content: m.gzip, contentType: 'application/tlsrpt+gzip' }],
    disableFileAccess: true,
    disableUrlAccess: true
  }).compile()
  // the composer makes the root multipart/mixed; the RFC's type keeps its parts and gets its own boundary
  root.setHeader('Content-Type', 'multipart/report; report-type=tlsrpt')
  const built = await root.build()
  const split = built.indexOf('\r\n\r\n')
  // the composer writes field names as `Tls-Report-Domain`; the RFC's spelling, for receivers that match it exactly
  const head = Buffer.from(built.subarray(0, split + 2).toString('latin1').replace(/^Tls-Report-/gm, 'TLS-Report-'), 'latin1')
  const body = built.subarray(split + 4)
  const signatures = Buffer.from(dkimSignatures([dkim], head, dkimBodyHash([body])), 'latin1')
  return { raw: Buffer.concat([signatures, head, Buffer.from('\r\n'), body]), messageId }
}
