/** The small work item published to OB_INBOUND once the raw message is stored; the object is named by `id`. */
export interface InboundJob {
  id: string
  received_at: string
  mail_from: string
  rcpt_to: string[]
  remote_ip: string
  helo: string
  size: number
}
