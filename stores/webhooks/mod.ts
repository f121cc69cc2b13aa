/** Webhook delivery state: the job stream contract, test events, job batches and the delivery log. */
export * from './webhook_jobs.ts'
export * from './delivery_log.ts'
export * from './webhook_job_batch.ts'
export * from './recovery_claims.ts'
export { eraseWebhookJobs } from './webhook_job_erase.ts'
