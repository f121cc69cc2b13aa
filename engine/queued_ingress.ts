import { isQueuedMessage, queuedMessageProblem, type QueuedMessage } from '../protocol/mod.ts'

const dec = new TextDecoder()

/**
 * A stream message as a QueuedMessage, or why it cannot be one: not JSON, or the first place where it departs
 * from the schema (`/to/0 must match pattern ...`). Nothing reads a field of a message before this.
 */
export function decodeQueued (data: Uint8Array): QueuedMessage | string {
  let value: unknown
  try {
    value = JSON.parse(dec.decode(data))
  } catch (err) {
    return (err as Error).message
  }
  return isQueuedMessage(value) ? value : queuedMessageProblem(value)
}
