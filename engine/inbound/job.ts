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
   * Set when the message was stored in one chunk together with the job (nearly all mail): the token naming its
   * chunk and metadata, and the SHA-256 (base64url) of its bytes. Without it the message is read by name.
   */
  raw?: { token: string, sha256: string }
}
