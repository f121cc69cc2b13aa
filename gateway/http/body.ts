import type { HttpResponse } from 'uWebSockets.js'
import { ApiError } from '../../engine/protocol/mod.ts'

export const MAX_BODY_BYTES = 10 * 1024 * 1024 // 10 MB, documented

/**
 * An over-limit body is still read (and thrown away) up to this many bytes before the 413 goes out.
 * HTTP/1.1 clients that are still uploading when the server answers and closes see a connection reset
 * instead of the answer; reading the rest first lets them see the 413. Past this, the answer goes out at once.
 */
export const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024

/**
 * Reads the request body, copying each chunk before uWS reuses its memory, and refuses it with
 * `payload_too_large` once it passes the cap, after reading the rest of it (see DISCARD_LIMIT_BYTES).
 * `aborted()` is checked by the caller; an aborted request never settles this promise.
 */
export function readBody (res: HttpResponse, contentLength: number, limit = MAX_BODY_BYTES): Promise<Buffer> {
  if (contentLength > DISCARD_LIMIT_BYTES) return Promise.reject(new ApiError('payload_too_large'))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let over = contentLength > limit
    res.onData((chunk, isLast) => {
      size += chunk.byteLength
      if (over || size > limit) {
        over = true
        chunks.length = 0
        if (isLast || size > DISCARD_LIMIT_BYTES) reject(new ApiError('payload_too_large'))
        return
      }
      chunks.push(Buffer.from(chunk.slice(0)))
      if (isLast) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size))
    })
  })
}

/** JSON.parse with the documented error instead of a SyntaxError. */
export function parseJson (raw: Buffer, contentType: string): unknown {
  if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType)) {
    throw new ApiError('validation_error', 'Content-Type must be application/json.', { field: 'Content-Type', errors: [{ field: 'Content-Type', message: 'must be application/json' }] })
  }
  if (raw.length === 0) {
    throw new ApiError('validation_error', 'The request body is empty; a JSON object is required.', { errors: [{ field: 'body', message: 'must be a JSON object' }] })
  }
  try {
    return JSON.parse(raw.toString('utf8'))
  } catch (err) {
    throw new ApiError('validation_error', `The body is not valid JSON: ${(err as Error).message}`, { errors: [{ field: 'body', message: 'must be valid JSON' }] })
  }
}
