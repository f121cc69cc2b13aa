import { defaultReturnPathHost, encodeVerp, signToken } from '../../protocol/mod.ts'
import { messageIdOf, type ComposeContext } from './compose.ts'
import { dkimBodyHash, dkimSignatures } from './dkim.ts'
import type { TaskMessage } from './task.ts'
import type { RawMail } from './transports.ts'

const CRLF = Buffer.from('\r\n')
const HEAD_END = Buffer.from('\r\n\r\n')

/**
 * A message submitted by SMTP (QueuedMessage.submitted): the MIME the application wrote, sent as it is, with the
 * List-Unsubscribe headers for each recipient put in front and the DKIM signatures above them. The envelope
 * sender is the recipient's VERP return path, as for composed mail. Nothing is rewritten, so links are not
 * tracked and no open pixel is added. The body is shared by every recipient, so its hash is computed once.
 */
export class SubmittedMessage {
  private readonly head: Buffer
  private readonly body: Buffer
  private bodyHash?: string
  private readonly messageId: string

  constructor (private readonly msg: TaskMessage, raw: string, private readonly ctx: ComposeContext) {
    const bytes = Buffer.from(raw, 'latin1')
    const end = bytes.indexOf(HEAD_END)
    // a message of headers only has no blank line; its body is empty
    this.head = end < 0 ? Buffer.concat([bytes, bytes.subarray(-2).equals(CRLF) ? Buffer.alloc(0) : CRLF]) : bytes.subarray(0, end + 2)
    this.body = end < 0 ? Buffer.alloc(0) : bytes.subarray(end + 4)
    this.messageId = messageIdOf(msg.id, ctx.domain)
  }

  forRecipient (rcpt: string): RawMail {
    const { msg, ctx } = this
    const unsubscribe = signToken(ctx.secret, { k: 'u', o: msg.org_id, m: msg.id, r: rcpt })
    const returnPath = encodeVerp(msg.id, rcpt, msg.return_path_host ?? defaultReturnPathHost(ctx.domain), ctx.verpKey)
    // RFC 2369 + RFC 8058; folded before the mailto only, so the https link stays on the header's first line
    const added = `List-Unsubscribe: <${ctx.publicUrl}/t/u/${unsubscribe}>,\r\n <mailto:${returnPath}?subject=unsubscribe>\r\n` +
      'List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n'
    const head = Buffer.concat([Buffer.from(added, 'latin1'), this.head])
    this.bodyHash ??= dkimBodyHash([this.body])
    const signatures = Buffer.from(dkimSignatures(ctx.dkim, head, this.bodyHash), 'latin1')
    return {
      envelope: { from: returnPath, to: [rcpt] }, raw: Buffer.concat([signatures, head, CRLF, this.body]), messageId: this.messageId
    }
  }
}
