/**
 * An error smtp-server turns into a reply line, `<responseCode> <text>`: what the hooks of both SMTP servers
 * (inbound and submission) reject with.
 */
export class SmtpReply extends Error {
    responseCode;
    enhanced;
    constructor(responseCode, text, options = {}) {
        const { enhanced, ...errorOptions } = options;
        super(enhanced === undefined ? text : `${enhanced} ${text}`, errorOptions);
        this.responseCode = responseCode;
        this.name = 'SmtpReply';
        this.enhanced = enhanced;
    }
}
//# sourceMappingURL=smtp_reply.js.map