import { heldWithin } from './waiting.ts'

/** The documented bound: a message is readable through GET /v1/messages/{id} within 1 s (p99) of its 202. */
export const READ_AFTER_WRITE_MS = 1000 // 1 s

const POLL_MS = 20

interface Requester<R> { request: (method: string, path: string, opts: { key?: string }) => Promise<R> }

/**
 * GET /v1/messages/{id} right after a send: a 404 may precede the message becoming readable, so it is asked
 * again until it is not 404 or `withinMs` (the documented second) has passed. Returns the last answer.
 */
export async function readMessage<R extends { status: number }> (
  ob: Requester<R>, id: string, key: string, withinMs = READ_AFTER_WRITE_MS
): Promise<R> {
  let last: R | undefined
  // past the bound the caller asserts on the last answer
  await heldWithin(async () => (last = await ob.request('GET', `/v1/messages/${id}`, { key })).status !== 404, withinMs, POLL_MS)
  return last!
}
