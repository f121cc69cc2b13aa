/**
 * Idempotency-Keys: the one wrapper every endpoint that takes one runs its handler in (`idempotent`), the store of
 * claims and answers behind it (Redis, with a durable copy in JetStream KV), which SMTP submission also uses for
 * repeated Message-IDs.
 */
export { idempotent } from './idempotent.js';
export { IdempotencyStore, IdempotencyStoreError, checkIdempotencyKey, fingerprint, IDEMPOTENCY_TTL_MS, IDEMPOTENCY_CLAIM_TTL_MS, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency_store.js';
export { IdempotencyLedger } from './idempotency_ledger.js';
//# sourceMappingURL=mod.js.map