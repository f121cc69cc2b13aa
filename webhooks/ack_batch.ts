/**
 * Acknowledgements are gathered for a few milliseconds and sent together. nats.js writes its buffer to the
 * socket once per microtask checkpoint, and attempts finish a few per socket read, so acknowledging at once
 * costs one socket write per handful of events (measured: NATS socket writes were a tenth of the engine's
 * CPU on the webhook path). A message acknowledged a few milliseconds later is not delivered again: the
 * consumers' ack wait is the request timeout plus 30 s.
 */
const ACK_FLUSH_MS = 5

const queue: Array<{ ack: () => void }> = []
let timer: NodeJS.Timeout | undefined

/** Sends every pending acknowledgement now (also at shutdown, before the connection is drained). */
export function flushAcks (): void {
  if (timer !== undefined) { clearTimeout(timer); timer = undefined }
  const batch = queue.splice(0)
  for (const m of batch) m.ack()
}

export function ackSoon (m: { ack: () => void }): void {
  queue.push(m)
  timer ??= setTimeout(flushAcks, ACK_FLUSH_MS)
}
