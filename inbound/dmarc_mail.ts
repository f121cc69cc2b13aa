import { simpleParser } from 'mailparser'
import { DmarcRefusal, packingOf, unpackReport, type DmarcRefusalCode } from './dmarc_unpack.ts'
import { parseAggregateReport } from './dmarc_report.ts'
import type { DmarcReportSummary } from '../stores/dmarc/mod.ts'

/**
 * Limits on a DMARC report mailed in by anyone. Real reports are far below them: Google's and Microsoft's daily
 * reports for a domain sending millions of messages a day hold a few hundred records, tens of kilobytes of XML.
 */
export const DMARC_LIMITS = Object.freeze({
  /** The message as received (SMTP DATA): 552 past it. */
  messageBytes: 10 * 1024 * 1024,
  /** The XML once decompressed: decompression stops there. */
  xmlBytes: 20 * 1024 * 1024,
  /** `<record>` elements in one report. */
  records: 50_000
})

/** The outcome crosses the thread boundary as plain data. */
export type DmarcRead = { ok: true, report: DmarcReportSummary } | { ok: false, code: DmarcRefusalCode, text: string }

/** Attachments looked at for the report; a report mail has one. */
const MAX_PARTS = 8

/**
 * The report a DMARC report mail carries: the first attachment (or the body itself, when the whole message is the
 * gzip or zip file) that is XML, gzip or zip. Runs on an analysis thread: the parse is CPU work.
 */
export async function readDmarcMail (raw: Buffer, limits = DMARC_LIMITS): Promise<DmarcRead> {
  try {
    const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true })
    const part = parsed.attachments.slice(0, MAX_PARTS).find((a) => packingOf(a.content) !== undefined)
    const xml = part !== undefined
      ? await unpackReport(part.content, limits.xmlBytes)
      : Buffer.from(typeof parsed.text === 'string' && packingOf(Buffer.from(parsed.text)) === 'xml' ? parsed.text : '')
    if (xml.length === 0) throw new DmarcRefusal('malformed', 'No DMARC report found: no XML, gzip or zip attachment')
    return { ok: true, report: parseAggregateReport(xml.toString('utf8'), limits.records) }
  } catch (err) {
    if (err instanceof DmarcRefusal) return { ok: false, code: err.code, text: err.message }
    return { ok: false, code: 'malformed', text: 'The message could not be read as a DMARC report' }
  }
}
