/**
 * An error smtp-server turns into a reply line. The server's own enhanced codes are switched off (it picks them by
 * reply code alone: every 553 would read 5.1.3), so each reply here carries its own, `enhanced`, in its text.
 */
export class SmtpReply extends Error {
  constructor (readonly responseCode: number, readonly enhanced: string, text: string, opts?: ErrorOptions) {
    super(`${enhanced} ${text}`, opts)
    this.name = 'SmtpReply'
  }
}
