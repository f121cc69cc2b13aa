/** DMARC aggregate report summaries per domain and UTC day, in Redis: written by inbound, read by the gateway. */
export {
  DmarcSummaries, DMARC_COUNT_FIELDS, DMARC_REPORTS_PER_DOMAIN_DAY, DMARC_SOURCES_PER_DAY, DMARC_REPORTERS_PER_DAY, DMARC_KEEP_DAYS,
  utcDay, type DmarcAddResult, type DmarcCounts, type DmarcDay, type DmarcReportSummary
} from './dmarc_summaries.ts'
