/**
 * Idempotency-Keys: the one wrapper every endpoint that takes one runs its handler in (`idempotent`), the store of
 * claims and answers behind it (Redis, with a durable copy in JetStream KV), which SMTP submission also uses for
 * repeated Message-IDs.
 */
export { idempotent, type IdempotentOptions, type IdempotentRun } from './idempotent.ts'
export {
  IdempotencyStore, IdempotencyStoreError, checkIdempotencyKey, fingerprint,
  IDEMPOTENCY_TTL_MS, IDEMPOTENCY_CLAIM_TTL_MS, MAX_IDEMPOTENCY_KEY_LENGTH,
  type Claim, type ClaimedKey, type RetryState
} from './idempotency_store.ts'
export { IdempotencyLedger } from './idempotency_ledger.ts'
