import { Compile } from 'typebox/compile'
import { QueuedMessage } from '../protocol/mod.ts'

// Compiled once per process (and per shard thread that imports it); checking a message allocates nothing beyond
// the parse, and the error list is only built for a message that fails.
const checker = Compile(QueuedMessage)
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
  if (checker.Check(value)) return value
  const first = checker.Errors(value)[0]
  if (first === undefined) return 'not a queued message'
  // `additionalProperties: false` reports an unknown field as the schema `false` at the field's own path
  const problem = first.keyword === 'boolean' ? 'is not a field of the queued message' : first.message
  return `${first.instancePath === '' ? 'message' : first.instancePath} ${problem}`
}
