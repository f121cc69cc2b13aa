/**
 * The one table of API error codes. HTTP statuses, SMTP replies and retry advice are read from here
 * and nowhere else; `docs/errors.md` lists the same rows and a unit test keeps the two equal.
 */
export const ERRORS = {
  validation_error: { status: 400, smtp: '501 5.5.4', retryable: false, message: 'The request is invalid.' },
  unauthorized: { status: 401, smtp: '535 5.7.8', retryable: false, message: 'Missing or invalid API key.' },
  forbidden: { status: 403, smtp: '550 5.7.1', retryable: false, message: 'This API key may not do that.' },
  not_found: { status: 404, smtp: '550 5.1.1', retryable: false, message: 'The resource does not exist.' },
  method_not_allowed: { status: 405, smtp: '502 5.5.1', retryable: false, message: 'The method is not allowed on this path.' },
  conflict: { status: 409, smtp: '451 4.3.0', retryable: false, message: 'The resource already exists or is being changed.' },
  payload_too_large: { status: 413, smtp: '552 5.3.4', retryable: false, message: 'The request body is larger than 10 MB.' },
  idempotency_key_reused: { status: 422, smtp: '550 5.7.0', retryable: false, message: 'This Idempotency-Key was used with a different request body.' },
  recipient_suppressed: { status: 422, smtp: '550 5.7.1', retryable: false, message: 'Every recipient is on the suppression list.' },
  unprocessable: { status: 422, smtp: '550 5.7.0', retryable: false, message: 'The request is well-formed but cannot be carried out.' },
  rate_limited: { status: 429, smtp: '451 4.7.1', retryable: true, message: 'Rate limit exceeded.' },
  internal_error: { status: 500, smtp: '451 4.3.0', retryable: true, message: 'Something went wrong on our side.' },
  service_unavailable: { status: 503, smtp: '421 4.3.2', retryable: true, message: 'The service is temporarily unavailable.' }
} as const satisfies Record<string, { status: number, smtp: string, retryable: boolean, message: string }>

export type ErrorCode = keyof typeof ERRORS

export interface FieldError { field: string, message: string }

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

  /** Wraps anything thrown into an ApiError; unknown failures become `internal_error` without leaking their text. */
  static from (err: unknown): ApiError {
    if (err instanceof ApiError) return err
    return new ApiError('internal_error', undefined, { cause: err })
  }
}
