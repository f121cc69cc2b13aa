import type { LookupFunction } from 'node:net'
import { Agent, request } from 'undici'
import type { InternalErrorCode } from '../../protocol/mod.ts'

/**
 * One HTTPS request to a host a recipient's DNS names (an MTA-STS policy server, a TLS-RPT `rua` endpoint), with
 * undici: its own connection (no pool: one request a domain a day, or a policy per max_age), the certificate
 * verified (Node's roots, else the CAs given), the host resolved and checked by `lookup` (safe_lookup.ts), no
 * redirect followed, the whole exchange within `timeoutMs`, and at most `maxBytes` of answer read.
 */
export interface HttpsCall {
  method: 'GET' | 'POST'
  headers: Record<string, string>
  body?: Buffer
  timeoutMs: number
  maxBytes: number
  lookup: LookupFunction
  ca: string[] | undefined
  /** Looks at the status and type before the body is read; what it throws ends the request, the body unread. */
  check?: (status: number, contentType: string) => void
}

export interface HttpsAnswer { status: number, contentType: string, body: Buffer }

/** The answer was longer than `maxBytes`: not read further, the connection closed. */
export class AnswerTooLargeError extends Error {
  readonly code = 'answer_too_large' satisfies InternalErrorCode
  constructor (readonly maxBytes: number) {
    super(`the answer is larger than ${maxBytes} bytes`)
    this.name = 'AnswerTooLargeError'
  }
}

export async function httpsCall (url: URL, call: HttpsCall): Promise<HttpsAnswer> {
  const agent = new Agent({
    connections: 1,
    headersTimeout: call.timeoutMs,
    bodyTimeout: call.timeoutMs,
    connect: {
      timeout: call.timeoutMs,
      lookup: call.lookup,
      rejectUnauthorized: true,
      ...(call.ca !== undefined ? { ca: call.ca } : {})
    }
  })
  try {
    const res = await request(url, {
      dispatcher: agent,
      method: call.method,
      headers: call.headers,
      ...(call.body !== undefined ? { body: call.body } : {}),
      signal: AbortSignal.timeout(call.timeoutMs)
    })
    // a body given up on (destroyed below) reports its abort as an error: nobody waits for it any more
    res.body.on('error', () => {})
    const type = res.headers['content-type']
    const contentType = Array.isArray(type) ? type[0] ?? '' : type ?? ''
    try {
      call.check?.(res.statusCode, contentType)
    } catch (err) {
      res.body.destroy()
      throw err
    }
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > call.maxBytes) {
        res.body.destroy()
        throw new AnswerTooLargeError(call.maxBytes)
      }
      chunks.push(chunk)
    }
    return { status: res.statusCode, contentType, body: Buffer.concat(chunks) }
  } finally {
    agent.destroy().catch(() => {})
  }
}

/** The code of a failed request's own error or of its cause (undici wraps some socket and TLS errors). */
export function failureCode (err: unknown): string {
  const e = err as { code?: unknown, cause?: { code?: unknown } }
  if (typeof e?.code === 'string' && !e.code.startsWith('UND_ERR')) return e.code
  if (typeof e?.cause?.code === 'string') return e.cause.code
  return typeof e?.code === 'string' ? e.code : ''
}
