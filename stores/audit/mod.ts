/** The audit log of configuration changes (GET /v1/audit-log): written and read by the gateway. */
export {
  AuditLog, AUDIT_SCAN_MAX, type AuditActor, type AuditEntry, type AuditFilter, type AuditPage, type AuditRecord
} from './audit_log.ts'
