import type { KeyObject } from 'node:crypto'
import type Mail from 'nodemailer/lib/mailer/index.js'
import { signToken, encodeVerp, type VerpKey } from '../../protocol/mod.ts'
import { rewriteHtml } from './tracking.ts'
import type { TaskMessage } from './task.ts'

/**
 * The nodemailer mail for one recipient of a message. Every recipient gets its own transaction because the
 * return path (VERP) and the tracking/unsubscribe tokens name the recipient; the visible To/Cc headers still
 * list everyone, as the sender wrote them. nodemailer composes the MIME and signs it (DKIM) when sent.
 */
/**
 * The header fields the DKIM signature covers: nodemailer's default list (RFC 6376 §5.4) plus
 * `List-Unsubscribe-Post`, which RFC 8058 §4 requires to be signed along with `List-Unsubscribe`; without it a
 * receiver may ignore the one-click unsubscribe.
 */
export const DKIM_SIGNED_HEADERS = [
  'From', 'Sender', 'Reply-To', 'Subject', 'Date', 'Message-ID', 'To', 'Cc', 'MIME-Version', 'Content-Type',
  'Content-Transfer-Encoding', 'Content-ID', 'Content-Description', 'Resent-Date', 'Resent-From', 'Resent-Sender',
  'Resent-To', 'Resent-Cc', 'Resent-Message-ID', 'In-Reply-To', 'References', 'List-Id', 'List-Help',
  'List-Unsubscribe', 'List-Unsubscribe-Post', 'List-Subscribe', 'List-Post', 'List-Owner', 'List-Archive'
].join(':')

export interface ComposeContext {
  publicUrl: string
  secret: Buffer
  domain: { name: string, selector: string, key: KeyObject }
  /** Signs the return path (VERP tag). */
  verpKey: VerpKey
}

export interface Content { subject: string, html?: string, text?: string }

export function messageIdOf (id: string, domain: string): string {
  return `<${id}@${domain}>`
}

export function composeFor (msg: TaskMessage, content: Content, rcpt: string, ctx: ComposeContext): Mail.Options {
  const claims = { o: msg.org_id, m: msg.id, r: rcpt }
  const unsubscribe = signToken(ctx.secret, { k: 'u', ...claims })
  const returnPath = encodeVerp(msg.id, rcpt, ctx.domain.name, ctx.verpKey)
  let html = content.html
  if (html !== undefined && (msg.track_opens || msg.track_clicks)) {
    html = rewriteHtml(html, {
      ...(msg.track_opens ? { openUrl: `${ctx.publicUrl}/t/o/${signToken(ctx.secret, { k: 'o', ...claims })}` } : {}),
      ...(msg.track_clicks ? { clickUrl: (u: string) => `${ctx.publicUrl}/t/c/${signToken(ctx.secret, { k: 'c', ...claims, u })}` } : {})
    })
  }
  const mail: Mail.Options = {
    from: msg.from,
    to: msg.to,
    subject: content.subject,
    messageId: messageIdOf(msg.id, ctx.domain.name),
    envelope: { from: returnPath, to: [rcpt] },
    headers: {
      ...msg.headers,
      // RFC 2369 + RFC 8058: the https link answers the one-click POST; the mailto reaches our inbound server
      'List-Unsubscribe': `<${ctx.publicUrl}/t/u/${unsubscribe}>, <mailto:${returnPath}?subject=unsubscribe>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click'
    },
    attachments: msg.attachments.map((a) => ({ filename: a.filename, content: a.content, encoding: 'base64', ...(a.content_type !== undefined ? { contentType: a.content_type } : {}) })),
    dkim: { domainName: ctx.domain.name, keySelector: ctx.domain.selector, privateKey: ctx.domain.key as unknown as string, headerFieldNames: DKIM_SIGNED_HEADERS },
    disableFileAccess: true,
    disableUrlAccess: true
  }
  if (msg.cc.length > 0) mail.cc = msg.cc
  if (msg.reply_to !== undefined) mail.replyTo = msg.reply_to
  if (html !== undefined) mail.html = html
  if (content.text !== undefined) mail.text = content.text
  return mail
}
