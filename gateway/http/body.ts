import type { HttpResponse } from 'uWebSockets.js'
import { ApiError, type InternalErrorCode } from '../../protocol/mod.ts'
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json_depth.ts'

export const MAX_BODY_BYTES = 10 * 1024 * 1024 // 10 MB, documented

/**
 * How much of an upload the gateway still reads, and for how long, after answering before its body was needed
 * (over the limit, or refused before the body mattered). Closing a connection under an upload makes the kernel
 * reset it, and a client still sending sees the reset instead of the answer (always so when it sent
 * `Connection: close`, since uWS closes such a connection as soon as the answer ends). So the answer goes out
 * at once, its end waits for the rest of the body, which is read and dropped, and the connection closes only if
 * the upload goes past DISCARD_LIMIT_BYTES in all or DISCARD_TIMEOUT_MS after the answer.
 */
export const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024
export const DISCARD_TIMEOUT_MS = 5_000 // 5 s

export class BodyTooLargeError extends ApiError {
  constructor (limit = MAX_BODY_BYTES) {
    const mb = Math.round(limit / 1024 / 1024)
    super('payload_too_large', limit === MAX_BODY_BYTES ? undefined : `The request body is larger than ${mb} MB.`)
  }
}

/** The client went away before its body arrived; nothing is answered. */
export class RequestAbortedError extends Error {
  readonly code = 'request_aborted' satisfies InternalErrorCode
  constructor () {
    super('the client closed the connection before the request body arrived')
    this.name = 'RequestAbortedError'
  }
}

/**
 * A request body as it streams in. Each chunk is copied before uWS reuses its memory, the cap is enforced
 * while streaming (a Content-Length over the cap is refused before any byte is kept), and every byte after the
 * cap is counted and dropped. `whole` settles exactly once: the body, `BodyTooLargeError`, or
 * `RequestAbortedError` after `abort()` (which the owner of `res.onAborted` calls: uWS keeps one handler).
 */
export class RequestBody {
  readonly whole: Promise<Buffer>
  private settle!: { resolve: (body: Buffer) => void, reject: (err: Error) => void }
  private chunks: Buffer[] = []
  private size = 0
  private keeping = true
  private state: 'arriving' | 'arrived' | 'abandoned' = 'arriving'
  private onRest: ((arrived: boolean) => void) | undefined

  constructor (res: HttpResponse, contentLength: number, private readonly limit = MAX_BODY_BYTES) {
    this.whole = new Promise((resolve, reject) => { this.settle = { resolve, reject } })
    // awaited only by routes that get as far as reading it
    this.whole.catch(() => {})
    if (contentLength > limit) this.refuse()
    res.onData((chunk, isLast) => { this.take(chunk, isLast) })
  }

  /** True once the last byte of the body has been read: the connection carries nothing more of this request. */
  get arrived (): boolean {
    return this.state === 'arrived'
  }

  /** The client went away: `whole` rejects and a pending `discardRest` resolves false. */
  abort (): void {
    this.settle.reject(new RequestAbortedError())
    this.finish('abandoned')
  }

  /**
   * Drops what was kept and what is still to come, for a request answered without its body. Resolves true once
   * the rest has arrived (the connection can carry the next request), false when it is given up (past
   * DISCARD_LIMIT_BYTES, DISCARD_TIMEOUT_MS from now, or the client went away): the connection must close.
   */
  async discardRest (): Promise<boolean> {
    this.keeping = false
    this.chunks = []
    if (this.state !== 'arriving') return this.state === 'arrived'
    return await new Promise((resolve) => {
      const timer = setTimeout(() => { this.finish('abandoned') }, DISCARD_TIMEOUT_MS).unref()
      this.onRest = (arrived) => {
        clearTimeout(timer)
        resolve(arrived)
      }
    })
  }

  private take (chunk: ArrayBuffer, isLast: boolean): void {
    if (this.state !== 'arriving') return
    this.size += chunk.byteLength
    if (this.keeping && this.size > this.limit) this.refuse()
    if (this.keeping) {
      this.chunks.push(Buffer.from(chunk.slice(0)))
      if (isLast) this.settle.resolve(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size))
    }
    if (isLast) this.finish('arrived')
    else if (!this.keeping && this.size > DISCARD_LIMIT_BYTES) this.finish('abandoned')
  }

  private refuse (): void {
    this.keeping = false
    this.chunks = []
    this.settle.reject(new BodyTooLargeError(this.limit))
  }

  private finish (state: 'arrived' | 'abandoned'): void {
    if (this.state !== 'arriving') return
    this.state = state
    this.onRest?.(state === 'arrived')
    this.onRest = undefined
  }
}

/** JSON.parse with the documented error instead of a SyntaxError, after the nesting depth is checked. */
export function parseJson (raw: Buffer, contentType: string): unknown {
  if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType)) {
    throw new ApiError('validation_error', 'Content-Type must be application/json.', {
      field: 'Content-Type', errors: [{ field: 'Content-Type', message: 'must be application/json' }]
    })
  }
  if (raw.length === 0) {
    throw new ApiError('validation_error', 'The request body is empty; a JSON object is required.', {
      errors: [{ field: 'body', message: 'must be a JSON object' }]
    })
  }
  if (nestsDeeperThan(raw, MAX_JSON_DEPTH)) {
    throw new ApiError('validation_error', `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`, {
      errors: [{ field: 'body', message: `must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep` }]
    })
  }
  try {
    return JSON.parse(raw.toString('utf8'))
  } catch (err) {
    throw new ApiError('validation_error', `The body is not valid JSON: ${(err as Error).message}`, {
      errors: [{ field: 'body', message: 'must be valid JSON' }]
    })
  }
}
