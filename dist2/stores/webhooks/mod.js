/** Webhook delivery state: the job stream contract, test events, job batches and the delivery log. */
export * from './webhook_jobs.js';
export * from './delivery_log.js';
export * from './webhook_job_batch.js';
export * from './recovery_claims.js';
//# sourceMappingURL=mod.js.map