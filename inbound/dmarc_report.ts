import { isIP } from 'node:net'
import { XMLParser } from 'fast-xml-parser'
import { DmarcRefusal } from './dmarc_unpack.ts'
import type { DmarcCounts, DmarcReportSummary } from '../stores/dmarc/mod.ts'

/**
 * An RFC 7489 aggregate report (Appendix C's `feedback` document) read into what the per-day summary adds up. The
 * XML is untrusted: a document type (and with it every entity definition) is refused before parsing, the records
 * are counted with one linear scan before the parser builds anything, and fast-xml-parser (linear in its input,
 * nesting bounded) does the rest. Fields are read defensively: a record without a valid source address or count,
 * or about another domain than the policy's (`header_from` outside it), is left out and counted as skipped.
 */

/** Longest reporter name and report id kept (RFC 7489 gives no bound; real ones are under 100 characters). */
const MAX_NAME_CHARS = 200
/** A single row cannot claim more messages than this (it is a count for one source over one day). */
const MAX_ROW_COUNT = 1_000_000_000

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false, // every value stays a string: read and checked below
  ignoreDeclaration: true,
  ignorePiTags: true,
  trimValues: true
})

type Node = Record<string, unknown>

function list (v: unknown): Node[] {
  if (v === undefined || v === null) return []
  return (Array.isArray(v) ? v : [v]).filter((x): x is Node => typeof x === 'object' && x !== null)
}

function text (v: unknown): string {
  return typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : ''
}

function node (v: unknown): Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Node : {}
}

function lower (v: unknown): string {
  return text(v).toLowerCase()
}

/** How many `<record>` elements the XML has, counted without parsing it. */
export function countRecords (xml: string): number {
  let n = 0
  const re = /<(?:[A-Za-z_][\w.-]*:)?record[\s>]/g
  while (re.exec(xml) !== null) n++
  return n
}

function withinDomain (name: string, domain: string): boolean {
  return name === domain || name.endsWith(`.${domain}`)
}

function unixSeconds (v: unknown, field: string): number {
  const s = text(v)
  if (!/^\d{1,12}$/.test(s)) throw new DmarcRefusal('malformed', `DMARC report date_range ${field} is not a number of seconds`)
  return Number(s)
}

/** Reads one report; throws DmarcRefusal when it is not one, or has more than `maxRecords` records. */
export function parseAggregateReport (xml: string, maxRecords: number): DmarcReportSummary {
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new DmarcRefusal('malformed', 'DMARC report XML with a document type is refused')
  const records = countRecords(xml)
  if (records > maxRecords) {
    throw new DmarcRefusal('too_many_records', `DMARC report has ${records} records, more than the ${maxRecords} read`)
  }
  let doc: Node
  try {
    doc = node(parser.parse(xml))
  } catch (err) {
    throw new DmarcRefusal('malformed', 'DMARC report XML does not parse', { cause: err })
  }
  const feedback = node(doc.feedback)
  const meta = node(feedback.report_metadata)
  const policy = node(feedback.policy_published)
  const range = node(meta.date_range)
  const reporter = text(meta.org_name).slice(0, MAX_NAME_CHARS)
  const reportId = text(meta.report_id).slice(0, MAX_NAME_CHARS)
  const domain = lower(policy.domain).replace(/\.$/, '')
  if (reporter === '' || reportId === '' || domain === '') {
    throw new DmarcRefusal('malformed', 'Not a DMARC aggregate report: org_name, report_id or policy_published domain missing')
  }
  const begin = unixSeconds(range.begin, 'begin')
  const end = unixSeconds(range.end, 'end')
  const totals: DmarcCounts = {
    messages: 0, spf_pass: 0, spf_aligned: 0, dkim_pass: 0, dkim_aligned: 0, dmarc_pass: 0, none: 0, quarantine: 0, reject: 0
  }
  const sources = new Map<string, { messages: number, dmarc_pass: number }>()
  let skipped = 0
  for (const record of list(feedback.record)) {
    const row = node(record.row)
    const ip = text(row.source_ip).toLowerCase()
    const countText = text(row.count)
    const count = /^\d{1,10}$/.test(countText) ? Number(countText) : -1
    const headerFrom = lower(node(record.identifiers).header_from)
    if (isIP(ip) === 0 || count < 0 || count > MAX_ROW_COUNT || !withinDomain(headerFrom, domain)) { skipped++; continue }
    const evaluated = node(row.policy_evaluated)
    const auth = node(record.auth_results)
    const spfAligned = lower(evaluated.spf) === 'pass'
    const dkimAligned = lower(evaluated.dkim) === 'pass'
    totals.messages += count
    if (list(auth.spf).some((r) => lower(r.result) === 'pass')) totals.spf_pass += count
    if (spfAligned) totals.spf_aligned += count
    if (list(auth.dkim).some((r) => lower(r.result) === 'pass')) totals.dkim_pass += count
    if (dkimAligned) totals.dkim_aligned += count
    const pass = spfAligned || dkimAligned
    if (pass) totals.dmarc_pass += count
    const disposition = lower(evaluated.disposition)
    totals[disposition === 'reject' ? 'reject' : disposition === 'quarantine' ? 'quarantine' : 'none'] += count
    const source = sources.get(ip) ?? { messages: 0, dmarc_pass: 0 }
    source.messages += count
    if (pass) source.dmarc_pass += count
    sources.set(ip, source)
  }
  return {
    reporter,
    report_id: reportId,
    domain,
    begin,
    end,
    records,
    skipped,
    totals,
    sources: [...sources].map(([ip, s]) => ({ ip, ...s }))
  }
}
