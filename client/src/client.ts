import { operations, type CallSpec, type Operations, type RequestOptions } from './generated.ts'
import { OutboxApiError, OutboxConnectionError } from './errors.ts'
import { DEFAULT_RETRY, retryDelay, sleep, type RetryPolicy } from './retry.ts'

export interface OutboxClientOptions {
  /** The API key, `ob_live_…` or `ob_test_…`. */
  apiKey: string
  /** Base URL of the API. Default `http://127.0.0.1:8080`. */
  baseUrl?: string
  /** Overrides of the retry policy. */
  retry?: Partial<RetryPolicy>
  /** A fetch implementation; default the global one. */
  fetch?: typeof fetch
  /** Called before each retry, with the error and the wait chosen. */
  onRetry?: (info: { attempt: number, delayMs: number, error: unknown }) => void
}

export interface RawRequest {
  method: string
  path: string
  body?: unknown
  query?: Record<string, unknown>
  /** Send an Idempotency-Key (generated unless `options.idempotencyKey` is given), the same on every retry. */
  idempotent?: boolean
  /** The answer is text, not JSON. */
  text?: boolean
}

/** A random UUID v4. Browsers offer randomUUID only on https (or localhost) pages; getRandomValues works everywhere. */
function newIdempotencyKey (): string {
  const c = globalThis.crypto
  if (typeof c.randomUUID === 'function') return c.randomUUID()
  const b = c.getRandomValues(new Uint8Array(16))
  b[6] = (b[6]! & 0x0f) | 0x40
  b[8] = (b[8]! & 0x3f) | 0x80
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

export interface OutboxClient extends Operations {}

/**
 * A typed client of the Outbox HTTP API. Every operation of the API is a method, grouped by resource
 * (`client.apiKeys.create(…)`, `client.messages.get(id)`); see generated.ts. Errors are OutboxApiError.
 */
export class OutboxClient {
  readonly baseUrl: string
  readonly retry: RetryPolicy
  readonly #apiKey: string
  readonly #fetch: typeof fetch
  readonly #onRetry: OutboxClientOptions['onRetry']

  constructor (options: OutboxClientOptions) {
    if (typeof options.apiKey !== 'string' || !options.apiKey.startsWith('ob_')) {
      throw new TypeError('apiKey must be an Outbox API key (ob_live_… or ob_test_…)')
    }
    this.#apiKey = options.apiKey
    this.baseUrl = (options.baseUrl ?? 'http://127.0.0.1:8080').replace(/\/+$/, '')
    this.retry = { ...DEFAULT_RETRY, ...options.retry }
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis)
    this.#onRetry = options.onRetry
    Object.assign(this, operations(async <T>(spec: CallSpec, opts?: RequestOptions) => await this.request<T>(spec, opts)))
  }

  /** Any API call, with the client's authentication, retries and error typing. */
  async request<T> (req: RawRequest, options: RequestOptions = {}): Promise<T> {
    const url = new URL(this.baseUrl + req.path)
    for (const [name, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value))
    }
    const headers: Record<string, string> = { authorization: `Bearer ${this.#apiKey}`, accept: 'application/json', ...options.headers }
    if (req.body !== undefined) headers['content-type'] = 'application/json'
    if (req.idempotent === true) headers['idempotency-key'] = options.idempotencyKey ?? newIdempotencyKey()
    // Retrying a request whose answer was lost is only safe when it cannot act twice.
    const canRetryNetwork = req.method === 'GET' || req.method === 'DELETE' || headers['idempotency-key'] !== undefined
    const body = req.body === undefined ? undefined : JSON.stringify(req.body)
    for (let attempt = 1; ; attempt++) {
      let error: unknown
      try {
        const res = await this.#fetch(url, { method: req.method, headers, body, signal: options.signal })
        const text = await res.text()
        if (res.ok) return (req.text === true ? text : (text === '' ? undefined : JSON.parse(text))) as T
        error = OutboxApiError.from(res.status, text, res.headers)
      } catch (err) {
        if (options.signal?.aborted === true) throw err
        error = err
      }
      const delayMs = retryDelay(error, attempt, this.retry, canRetryNetwork)
      if (delayMs === undefined) {
        if (error instanceof OutboxApiError) throw error
        const why = (error as Error)?.message ?? String(error)
        throw new OutboxConnectionError(`${req.method} ${req.path} failed after ${attempt} attempt(s): ${why}`, { cause: error })
      }
      this.#onRetry?.({ attempt, delayMs, error })
      await sleep(delayMs, options.signal)
    }
  }
}
