export interface SmtpReplyOptions extends ErrorOptions {
  /**
   * The enhanced status code (RFC 3463), written at the start of the text. For a server that has smtp-server's own
   * enhanced codes switched off (submission: it picks them by reply code alone, so every 553 would read 5.1.3);
   * a server that keeps them on (inbound) leaves it out and smtp-server adds its own.
   */
  enhanced?: string
}

/**
 * An error smtp-server turns into a reply line, `<responseCode> <text>`: what the hooks of both SMTP servers
 * (inbound and submission) reject with.
 */
export class SmtpReply extends Error {
  readonly enhanced: string | undefined

  constructor (readonly responseCode: number, text: string, options: SmtpReplyOptions = {}) {
    const { enhanced, ...errorOptions } = options
    super(enhanced === undefined ? text : `${enhanced} ${text}`, errorOptions)
    this.name = 'SmtpReply'
    this.enhanced = enhanced
  }
}
