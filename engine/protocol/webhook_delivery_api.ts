/** What the gateway needs of webhook delivery: the job stream contract, test events and the delivery log. */
export * from './webhook_jobs.ts'
export * from './delivery_log.ts'
