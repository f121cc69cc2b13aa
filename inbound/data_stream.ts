import type { Readable } from 'node:stream'

/** The three ways the inbound listener reads a message's DATA stream. */

/**
 * Reads DATA until its end or until more than `max` bytes arrived; in the second case the stream is left paused
 * with what was read so far, for `webStreamOf` to continue from.
 */
export function readUpTo (stream: Readable, max: number): Promise<{ chunks: Buffer[], bytes: number, ended: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let bytes = 0
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk)
      bytes += chunk.length
      if (bytes <= max) return
      stream.pause()
      settle()
      resolve({ chunks, bytes, ended: false })
    }
    const onEnd = (): void => { settle(); resolve({ chunks, bytes, ended: true }) }
    const onError = (err: Error): void => { settle(); reject(err) }
    const settle = (): void => {
      stream.off('data', onData)
      stream.off('end', onEnd)
      stream.off('error', onError)
    }
    stream.on('data', onData)
    stream.once('end', onEnd)
    stream.once('error', onError)
  })
}

/**
 * The DATA stream as a web ReadableStream for the object store, with backpressure: the socket is paused while the
 * store has not taken the chunks already handed over. (Readable.toWeb costs about 3 ms more per message here.)
 * `head` is what `readUpTo` already read.
 */
export function webStreamOf (stream: Readable, limit: number, head: { chunks: Buffer[], bytes: number }): ReadableStream<Uint8Array> {
  let open = true
  let bytes = head.bytes
  return new ReadableStream<Uint8Array>({
    start (controller) {
      for (const chunk of head.chunks) controller.enqueue(chunk)
      stream.on('data', (chunk: Buffer) => {
        // After the store gave up (cancel) or the limit was passed, the rest of DATA is only drained so smtp-server
        // can answer (552 past the limit); an endless DATA never fills the bucket.
        if (!open) return
        bytes += chunk.length
        if (bytes > limit) {
          open = false
          controller.close()
          stream.resume()
          return
        }
        controller.enqueue(chunk)
        if ((controller.desiredSize ?? 1) <= 0) stream.pause()
      })
      stream.once('end', () => { if (open) { open = false; controller.close() } })
      stream.once('error', (err) => { if (open) { open = false; controller.error(err) } })
    },
    pull () { stream.resume() },
    cancel () { open = false; stream.resume() }
  }, { highWaterMark: 16 })
}

/**
 * Reads DATA to its end, keeping at most `max` bytes: past that the chunks already kept are let go and the rest is
 * read and dropped, so a report over the limit costs no more memory than `max` and the reply still waits for the
 * end of DATA (smtp-server sends it then). `data` is undefined when the message was over the limit.
 */
export async function readWhole (stream: Readable, max: number): Promise<{ data?: Buffer, bytes: number }> {
  return await new Promise((resolve, reject) => {
    let chunks: Buffer[] | undefined = []
    let bytes = 0
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length
      if (chunks === undefined) return
      if (bytes > max) chunks = undefined
      else chunks.push(chunk)
    })
    stream.once('end', () => {
      resolve(chunks === undefined ? { bytes } : { data: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes), bytes })
    })
    stream.once('error', reject)
  })
}
