import {
  QUEUED_FORMAT_VERSION, isQueuedMessage, queuedFormatOf, queuedMessageProblem, salvageQueued, type QueuedMessage
} from '../protocol/mod.ts'

const dec = new TextDecoder()

/**
 * What a stream message is to this engine. `readable`: a QueuedMessage of a format it reads, unknown fields
 * included and untouched. `newer`: a format above QUEUED_FORMAT_VERSION, never read further here (a newer engine
 * delivers it). `broken`: not JSON, or it departs from the schema of a format this engine reads (`problem`, the first
 * place: `/to/0 must match pattern ...`); `salvaged` is what can be read of it to end it with events, absent
 * when it names no message, organisation or recipient.
 */
export type QueuedIntake =
  | { kind: 'readable', msg: QueuedMessage }
  | { kind: 'newer', format: number }
  | { kind: 'broken', problem: string, salvaged?: QueuedMessage }

/** Nothing reads a field of a stream message before this. */
export function readQueued (data: Uint8Array): QueuedIntake {
  let value: unknown
  try {
    value = JSON.parse(dec.decode(data))
  } catch (err) {
    return { kind: 'broken', problem: (err as Error).message }
  }
  const format = queuedFormatOf(value)
  if (format !== undefined && format > QUEUED_FORMAT_VERSION) return { kind: 'newer', format }
  if (isQueuedMessage(value)) return { kind: 'readable', msg: value }
  const salvaged = salvageQueued(value)
  return { kind: 'broken', problem: queuedMessageProblem(value), ...(salvaged !== undefined ? { salvaged } : {}) }
}

/** A stream message as a QueuedMessage this engine reads, or why it is not one (see `readQueued`). */
export function decodeQueued (data: Uint8Array): QueuedMessage | string {
  const read = readQueued(data)
  if (read.kind === 'readable') return read.msg
  return read.kind === 'newer' ? `format ${read.format} is newer than this engine reads (${QUEUED_FORMAT_VERSION})` : read.problem
}
