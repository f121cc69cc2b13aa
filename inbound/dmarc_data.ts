import type { Readable } from 'node:stream'

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
