import type Mail from 'nodemailer/lib/mailer/index.js'
import { encodeVerp, signToken } from '../../protocol/mod.ts'
import { DKIM_SIGNED_HEADERS, type ComposeContext } from './compose.ts'
import type { TaskMessage } from './task.ts'

/**
 * The nodemailer mail for one recipient of a message submitted by SMTP (QueuedMessage.submitted): the MIME the
 * application wrote, sent as it is, with the List-Unsubscribe headers for this recipient put in front and the DKIM
 * signature added when sent. The envelope sender is the recipient's VERP return path, as for composed mail.
 * Nothing is rewritten, so links are not tracked and no open pixel is added.
 */
export function composeSubmitted (msg: TaskMessage, raw: string, rcpt: string, ctx: ComposeContext): Mail.Options {
  const unsubscribe = signToken(ctx.secret, { k: 'u', o: msg.org_id, m: msg.id, r: rcpt })
  const returnPath = encodeVerp(msg.id, rcpt, ctx.domain.name, ctx.verpKey)
  // RFC 2369 + RFC 8058, as composeFor writes them; folded before the mailto so no line nears 998 octets.
  const added = `List-Unsubscribe: <${ctx.publicUrl}/t/u/${unsubscribe}>,\r\n <mailto:${returnPath}?subject=unsubscribe>\r\n` +
    'List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n'
  return {
    envelope: { from: returnPath, to: [rcpt] },
    raw: Buffer.concat([Buffer.from(added), Buffer.from(raw, 'latin1')]),
    dkim: { domainName: ctx.domain.name, keySelector: ctx.domain.selector, privateKey: ctx.domain.key as unknown as string, headerFieldNames: DKIM_SIGNED_HEADERS },
    disableFileAccess: true,
    disableUrlAccess: true
  }
}
