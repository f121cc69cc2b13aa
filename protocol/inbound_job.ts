/** The small work item published to OB_INBOUND once the raw message is stored; the object is named by `id`. */
export interface InboundJob {
  id: string
  received_at: string
  mail_from: string
  rcpt_to: string[]
  remote_ip: string
  helo: string
  size: number
  /**
   * Set when the message was stored in one chunk together with the job: the token naming its chunk and metadata,
   * and the SHA-256 (base64url) of its bytes. Without it (and not carried inline) the message is read by name.
   */
  raw?: { token: string, sha256: string }
}

const LF = 0x0a
const dec = new TextDecoder()

/**
 * A job message is its JSON, optionally followed by a line feed and the raw message itself (a message small
 * enough to travel with its job, see `storeInline`). JSON.stringify never writes a bare line feed, so the first
 * one ends the job; jobs without it name a message stored in the bucket.
 */
export function encodeJob (job: InboundJob, raw?: Uint8Array): Uint8Array {
  const json = Buffer.from(JSON.stringify(job))
  if (raw === undefined) return json
  const out = Buffer.allocUnsafe(json.length + 1 + raw.length)
  json.copy(out, 0)
  out[json.length] = LF
  out.set(raw, json.length + 1)
  return out
}

export function decodeJob (data: Uint8Array): { job: InboundJob, raw?: Buffer } {
  const end = data.indexOf(LF)
  if (end < 0) return { job: JSON.parse(dec.decode(data)) as InboundJob }
  const job = JSON.parse(dec.decode(data.subarray(0, end))) as InboundJob
  return { job, raw: Buffer.from(data.buffer, data.byteOffset + end + 1, data.byteLength - end - 1) }
}
