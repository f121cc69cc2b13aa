/** TLS-RPT counters and report bookkeeping in Redis (keys `ob:tlsrpt:*`). */
export {
  TlsCounterBatch, TlsReportStore, utcDay, KEEP_S, FLUSH_MS, MAX_DETAILS,
  type TlsPolicyRef, type TlsFailureDetail, type TlsDayCounts
} from './tls_counters.ts'
