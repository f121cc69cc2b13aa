/** An error smtp-server turns into a reply line: `<code> <enhanced code> <message>`. */
export class SmtpReply extends Error {
  constructor (readonly responseCode: number, message: string, opts?: ErrorOptions) {
    super(message, opts)
    this.name = 'SmtpReply'
  }
}
