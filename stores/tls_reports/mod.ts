/** TLS-RPT counters and report bookkeeping in Redis (keys `ob:tlsrpt:*`). */
export {
  TlsCounterBatch, TlsReportStore, utcDay, KEEP_S, FLUSH_MS, MAX_DETAILS, LOCK_KEY as TLS_REPORT_LOCK_KEY,
  type TlsPolicyRef, type TlsFailureDetail, type TlsDayCounts
} from './tls_counters.ts'
