import { isJetStreamFull } from './jetstream_errors.ts'

/**
 * The one table of error codes, all spelled in snake_case, in two parts that `docs/errors.md` lists row for row (a
 * unit test keeps them equal). `ERRORS`: what the API answers, each code with its HTTP status. `INTERNAL_ERRORS`:
 * the `code` of each error that stays inside the service, as the logs show it; a boundary maps it to an API code
 * (or an SMTP reply) before anyone outside sees it. The two parts share no code, so `code in ERRORS` is true only
 * for what a client can receive. Inbound SMTP answers with its own replies (inbound/), none of which is an API
 * error, so the table has no SMTP column.
 */
export const ERRORS = {
  validation_error: { status: 400, message: 'The request is invalid.' },
  unauthorized: { status: 401, message: 'Missing or invalid API key.' },
  forbidden: { status: 403, message: 'This API key may not do that.' },
  organization_suspended: { status: 403, message: 'The organisation of this API key is suspended by the operator.' },
  not_found: { status: 404, message: 'The resource does not exist.' },
  method_not_allowed: { status: 405, message: 'The method is not allowed on this path.' },
  conflict: { status: 409, message: 'The resource already exists or is being changed.' },
  egress_source_in_use: { status: 409, message: 'The source is the last one of a pool; change or delete the pool first.' },
  egress_pool_in_use: {
    status: 409, message: 'The pool is assigned to organisations, domains or message streams; assign them another pool first.'
  },
  payload_too_large: { status: 413, message: 'The request body is larger than 10 MB.' },
  misdirected_request: { status: 421, message: 'This host serves no tracking links.' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was used with a different request body.' },
  recipient_suppressed: { status: 422, message: 'Every recipient is on the suppression list.' },
  stream_not_found: { status: 422, message: 'The organisation has no message stream with this id.' },
  unprocessable: { status: 422, message: 'The request is well-formed but cannot be carried out.' },
  stream_paused: { status: 423, message: 'Sending on this stream is paused: its bounce or complaint rate passed its threshold.' },
  rate_limited: { status: 429, message: 'Rate limit exceeded.' },
  internal_error: { status: 500, message: 'Something went wrong on our side.' },
  service_unavailable: { status: 503, message: 'The service is temporarily unavailable.' },
  store_full: { status: 503, message: 'The data store is full; retry later.' },
  queue_full: { status: 503, message: 'The message store is full; nothing was queued.' }
} as const satisfies Record<string, { status: number, message: string }>

export type ErrorCode = keyof typeof ERRORS

export const INTERNAL_ERRORS = {
  publish_timeout: 'JetStream did not acknowledge a publish in time; it may still have stored it.',
  publish_rejected: 'JetStream refused a publish: no stream for the subject, a limit, or JetStream unavailable.',
  publish_too_large: 'An encoded message is larger than the NATS server accepts (max_payload); nothing was sent.',
  store_reservation: 'At start, the NATS server could not reserve a stream\'s share of OB_NATS_STORE_MB.',
  content_mismatch: 'The stored content of a large message does not match the reference its message carries.',
  inbound_raw_pending: 'An inbound message is not readable yet; its job is retried.',
  inbound_analysis_unavailable: 'The inbound analysis threads failed; the message is analysed again later.',
  kv_conflict: 'A control-plane key already exists or changed since it was read.',
  redis_eviction_policy: 'Redis runs with a maxmemory-policy other than noeviction, or does not tell which.',
  redis_url_invalid: 'REDIS_URL was refused; the configuration error names the variable.',
  config_error: 'The configuration is invalid; the message names every bad variable.',
  cli_error: 'A CLI command failed; it reports one line and exits with status 1.',
  request_aborted: 'The client closed the connection before its request body arrived; nothing is answered.',
  idempotency_store_unavailable: 'Redis did not answer an Idempotency-Key claim.',
  submission_tls_unavailable: 'SMTP submission has no certificate files and none could be made.',
  thread_pool_closed: 'Work was handed to a thread pool after it closed; nothing ran.',
  ssrf_blocked: 'A webhook target resolves to a private, loopback, link-local or multicast address.',
  response_too_large: 'A webhook endpoint\'s response was larger than is read; its connection was closed.',
  verp_key_unknown: 'No return-path (VERP) key has this id, or none exists yet.',
  verp_key_in_use: 'The return-path (VERP) key to retire is the newest, which signs new mail.',
  engine_thread_failed: 'A worker thread failed (not an error class: the code of the log line).',
  webhook_jobs_full: 'The webhook job stream is at its admission limit; the event is fanned out again later.',
  egress_busy: 'Every connection an egress lane may have is open in the cluster; the recipient waits, no attempt is counted.',
  health_lookup_failed: 'A DNS look-up of a domain health check failed or timed out; its item is not_checked.',
  sts_fetch_failed: 'A recipient domain\'s MTA-STS policy could not be fetched or is not valid; its mail goes as without a ' +
    'policy and the failure is reported (TLS-RPT).',
  answer_too_large: 'An HTTPS answer the engine reads (an MTA-STS policy, a TLS report endpoint\'s reply) was larger than is ' +
    'read; its connection was closed.'
} as const satisfies Record<string, string>

export type InternalErrorCode = keyof typeof INTERNAL_ERRORS

/** `Retry-After` of a `store_full` answer: room comes back when an operator acts, not in a second. */
export const STORE_FULL_RETRY_AFTER_S = 10

/** Redis refused a write at `maxmemory` (its error reply code is `OOM`, also inside a script's error). */
export function isStoreFull (err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const m = err.message
  return m.startsWith('OOM ') || m.includes(' OOM command not allowed')
}

export interface FieldError {
  field: string
  message: string
  /** A value outside an enum: the values the field allows. */
  allowed?: unknown[]
}

export interface ApiErrorOptions extends ErrorOptions {
  field?: string
  details?: Record<string, unknown>
  errors?: FieldError[]
  retryAfter?: number
}

/** An error the API answers with; its HTTP status comes from `ERRORS`. */
export class ApiError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly field?: string
  readonly details?: Record<string, unknown>
  readonly errors?: FieldError[]
  readonly retryAfter?: number

  constructor (code: ErrorCode, message?: string, opts: ApiErrorOptions = {}) {
    super(message ?? ERRORS[code].message, opts.cause === undefined ? undefined : { cause: opts.cause })
    this.name = 'ApiError'
    this.code = code
    this.status = ERRORS[code].status
    if (opts.field !== undefined) this.field = opts.field
    if (opts.details !== undefined) this.details = opts.details
    if (opts.errors !== undefined) this.errors = opts.errors
    if (opts.retryAfter !== undefined) this.retryAfter = opts.retryAfter
  }

  /** The JSON body of the documented error format. */
  toJSON (requestId?: string): { error: Record<string, unknown> } {
    const error: Record<string, unknown> = { code: this.code, message: this.message }
    if (this.field !== undefined) error.field = this.field
    if (this.details !== undefined) error.details = this.details
    if (this.errors !== undefined) error.errors = this.errors
    if (this.retryAfter !== undefined) error.retry_after = this.retryAfter
    if (requestId !== undefined) error.request_id = requestId
    return { error }
  }

  static validation (errors: FieldError[]): ApiError {
    const first = errors[0]
    const message = errors.length === 1 && first !== undefined ? `${first.field}: ${first.message}` : `${errors.length} fields are invalid.`
    return new ApiError('validation_error', message, { errors, ...(first !== undefined ? { field: first.field } : {}) })
  }

  /**
   * Wraps anything thrown into an ApiError; unknown failures become `internal_error` without leaking their text.
   * Redis refusing a write at `maxmemory` (error reply code `OOM`), or JetStream refusing one for lack of room (the
   * configuration's buckets are in its store), is `store_full`, whichever store call met it.
   */
  static from (err: unknown): ApiError {
    if (err instanceof ApiError) return err
    if (isStoreFull(err) || isJetStreamFull(err)) {
      return new ApiError('store_full', undefined, { cause: err, retryAfter: STORE_FULL_RETRY_AFTER_S })
    }
    return new ApiError('internal_error', undefined, { cause: err })
  }
}
