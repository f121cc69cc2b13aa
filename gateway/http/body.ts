import type { HttpResponse } from 'uWebSockets.js'
import { ApiError } from '../../engine/protocol/mod.ts'
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json_depth.ts'

export const MAX_BODY_BYTES = 10 * 1024 * 1024 // 10 MB, documented

/**
 * How much of an over-limit body the connection may still carry after the 413 for it to stay open. The 413
 * goes out at once; uWS's parser then reads the rest of the declared body and drops it, so a client still
 * uploading sees the answer (closing under an upload makes the kernel reset the connection, and the client
 * sees an error instead). A declared body larger than this is not worth reading: the connection is closed.
 */
export const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024

/** `payload_too_large` for a request body; `closeConnection` when the connection must not carry the rest. */
export class BodyTooLargeError extends ApiError {
  constructor (readonly closeConnection: boolean) {
    super('payload_too_large')
  }
}

/**
 * Reads the request body, copying each chunk before uWS reuses its memory, and stops at the cap
 * while streaming (a Content-Length over the cap is refused before any byte is read).
 * `aborted()` is checked by the caller; an aborted request never settles this promise.
 */
export function readBody (res: HttpResponse, contentLength: number, limit = MAX_BODY_BYTES): Promise<Buffer> {
  if (contentLength > limit) return Promise.reject(new BodyTooLargeError(contentLength > DISCARD_LIMIT_BYTES))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let failed = false
    res.onData((chunk, isLast) => {
      if (failed) return
      size += chunk.byteLength
      if (size > limit) {
        // more bytes than declared: the parser and the client disagree, so the connection cannot be reused
        failed = true
        reject(new BodyTooLargeError(true))
        return
      }
      chunks.push(Buffer.from(chunk.slice(0)))
      if (isLast) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size))
    })
  })
}

/** JSON.parse with the documented error instead of a SyntaxError, after the nesting depth is checked. */
export function parseJson (raw: Buffer, contentType: string): unknown {
  if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType)) {
    throw new ApiError('validation_error', 'Content-Type must be application/json.', { field: 'Content-Type', errors: [{ field: 'Content-Type', message: 'must be application/json' }] })
  }
  if (raw.length === 0) {
    throw new ApiError('validation_error', 'The request body is empty; a JSON object is required.', { errors: [{ field: 'body', message: 'must be a JSON object' }] })
  }
  if (nestsDeeperThan(raw, MAX_JSON_DEPTH)) {
    throw new ApiError('validation_error', `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`, { errors: [{ field: 'body', message: `must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep` }] })
  }
  try {
    return JSON.parse(raw.toString('utf8'))
  } catch (err) {
    throw new ApiError('validation_error', `The body is not valid JSON: ${(err as Error).message}`, { errors: [{ field: 'body', message: 'must be valid JSON' }] })
  }
}
