/**
 * Acknowledgements made during one turn of the event loop are sent together. nats.js writes its buffer to the
 * socket once per microtask checkpoint, and attempts finish one per socket read, so without this every ack
 * is its own write (measured: socket writes were the largest cost on the webhook path).
 */
const queue: Array<{ ack: () => void }> = []
let scheduled = false

function flush (): void {
  scheduled = false
  const batch = queue.splice(0)
  for (const m of batch) m.ack()
}

export function ackSoon (m: { ack: () => void }): void {
  queue.push(m)
  if (!scheduled) {
    scheduled = true
    setImmediate(flush)
  }
}
