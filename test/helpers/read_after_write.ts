import { heldWithin } from './waiting.ts'

/** The documented bound: a message is readable through GET /v1/messages/{id} within 1 s (p99) of its 202. */
export const READ_AFTER_WRITE_MS = 1000 // 1 s

const POLL_MS = 20

interface Requester<R> { request: (method: string, path: string, opts: { key?: string }) => Promise<R> }

/**
 * GET /v1/messages/{id} right after a send: a 404 may precede the message becoming readable, so it is asked
 * again until it is not 404 or `withinMs` (the documented second) has passed. Returns the last answer. A 503 (the
 * message store did not answer within its command timeout, as on a machine short of CPU) is asked again as well,
 * as a client honouring its `Retry-After` would, within the same bound.
 */
export async function readMessage<R extends { status: number }> (
  ob: Requester<R>, id: string, key: string, withinMs = READ_AFTER_WRITE_MS
): Promise<R> {
  let last: R | undefined
  // past the bound the caller asserts on the last answer
  const settled = async (): Promise<boolean> => ![404, 503].includes((last = await ob.request('GET', `/v1/messages/${id}`, { key })).status)
  await heldWithin(settled, withinMs, POLL_MS)
  return last!
}
