import { simpleParser, type ParsedMail, type AddressObject } from 'mailparser'
import { analyzeContent, scanHtml, type InboundJob } from '../protocol/mod.ts'
import { checkAuthentication, type Authentication, type DnsResolve } from './authenticate.ts'
import { readReport, type Report } from './reports.ts'
import { readDmarcMail, type DmarcRead } from './dmarc_mail.ts'

/**
 * Everything the CPU-heavy part of processing finds out about one message: parse (mailparser), report
 * extraction, SPF/DKIM/DMARC (mailauth) and the content score. Plain data, so it crosses a worker boundary.
 */
export interface MessageAnalysis {
  from: string
  subject: string
  text: string
  html: string
  headers: Record<string, string>
  attachments: Array<{ filename: string, content_type: string, size: number, content?: string }>
  report?: Report
  authentication?: Authentication
  spamScore?: number
  /** `skipped` when the HTML went past a parsing limit: no text was derived from it and its rules did not run. */
  contentAnalysis?: 'complete' | 'skipped'
  /** A DMARC aggregate report mail (asked for with `dmarc`): the report read, or why it is refused. */
  dmarc?: DmarcRead
}

export interface AnalysisRequest {
  raw: Uint8Array
  job: InboundJob
  /** Routed mail: check SPF/DKIM/DMARC and score the content. */
  routed: boolean
  /** A route wants attachment contents (base64). */
  withContent: boolean
  /** A report may be expected (VERP recipient or routed mail). */
  reports: boolean
  /** Mail to a DMARC report address: only the aggregate report is read (nothing else is done with the message). */
  dmarc?: boolean
}

function headerMap (parsed: ParsedMail): Record<string, string> {
  const out: Record<string, string> = {}
  for (const h of parsed.headerLines) {
    const colon = h.line.indexOf(':')
    const value = h.line.slice(colon + 1).replace(/\r?\n[ \t]+/g, ' ').trim()
    // Repeated headers (Received) are kept in order, one per line.
    out[h.key] = out[h.key] === undefined ? value : `${out[h.key]}\n${value}`
  }
  return out
}

function addressText (a: AddressObject | AddressObject[] | undefined): string {
  if (a === undefined) return ''
  return (Array.isArray(a) ? a : [a]).map((x) => x.text).join(', ')
}

export async function analyzeMessage (req: AnalysisRequest, resolver: DnsResolve, mta: string): Promise<MessageAnalysis> {
  const raw = Buffer.from(req.raw.buffer, req.raw.byteOffset, req.raw.byteLength)
  if (req.dmarc === true) {
    return { from: '', subject: '', text: '', html: '', headers: {}, attachments: [], dmarc: await readDmarcMail(raw) }
  }
  // textAsHtml is not part of the payload, and its linkify pass costs more than the rest of the parse.
  const options = { keepDeliveryStatus: true, skipTextLinks: true, skipTextToHtml: true }
  // mailparser turns an HTML-only body into text with html-to-text, whose parse takes time growing with nesting
  // depth × elements and has no limit of its own. The first parse leaves that out; the HTML is then measured
  // against HTML_LIMITS, and only HTML within them is parsed again for its text. Past them the text stays empty.
  let parsed = await simpleParser(raw, { ...options, skipHtmlToText: true })
  const html = typeof parsed.html === 'string' ? parsed.html : ''
  if (html !== '' && (parsed.text ?? '') === '' && scanHtml(html).stoppedAt === undefined) {
    parsed = await simpleParser(raw, options)
  }
  const out: MessageAnalysis = {
    from: addressText(parsed.from),
    subject: parsed.subject ?? '',
    text: parsed.text ?? '',
    html,
    headers: headerMap(parsed),
    attachments: parsed.attachments.map((a) => ({
      filename: a.filename ?? '',
      content_type: a.contentType,
      size: a.size,
      ...(req.withContent ? { content: a.content.toString('base64') } : {})
    }))
  }
  if (req.reports) {
    const report = await readReport(parsed)
    if (report !== undefined) out.report = report
  }
  if (req.routed) {
    // A failure inside the checks (a malformed signature header, a resolver error) is a temporary error of the
    // check, not of the message: the mail is still delivered to the route, marked temperror.
    out.authentication = await checkAuthentication(raw, req.job, resolver, mta)
      .catch((): Authentication => ({ spf: 'temperror', dkim: 'temperror', dmarc: 'temperror' }))
    const content = analyzeContent({
      subject: out.subject, html, text: out.text, from: out.from, attachments: out.attachments
    })
    out.spamScore = content.score
    out.contentAnalysis = content.content_analysis
  }
  return out
}
