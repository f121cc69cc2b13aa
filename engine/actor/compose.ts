import { foldLines } from 'nodemailer/lib/mime-funcs'
import { signToken, encodeVerp, defaultReturnPathHost, isReservedHeader, type VerpKey } from '../../protocol/mod.ts'
import { dkimBodyHash, DkimHeaderSigner, type DkimKey } from './dkim.ts'
import { buildLayout, encodeHtml, HTML_SLOT, type HtmlEncoding } from './mime.ts'
import { applyTracking, cachedTrackingPlan, type TrackingPlan } from './tracking.ts'
import type { TaskMessage } from './task.ts'
import type { RawMail } from './transports.ts'

export { DKIM_SIGNED_HEADERS } from './dkim.ts'

export interface ComposeContext {
  /** Where the open, click and unsubscribe links point: OB_PUBLIC_URL, on the domain's tracking host when it has one. */
  publicUrl: string
  secret: Buffer
  /** The sending domain: Message-ID, and the return path unless the message carries its own host. */
  domain: string
  /** One DKIM signature per key, in order. */
  dkim: readonly DkimKey[]
  /** Signs the return path (VERP tag). */
  verpKey: VerpKey
}

export interface Content { subject: string, html?: string, text?: string }

/** What the SMTP connection sends for one recipient: the envelope and the finished, signed bytes. */
export type { RawMail as RecipientMail } from './transports.ts'

export function messageIdOf (id: string, domain: string): string {
  return `<${id}@${domain}>`
}

const CRLF = Buffer.from('\r\n')

/**
 * One message, composed once for all its recipients. Every recipient gets its own transaction because the
 * return path (VERP) and the tracking/unsubscribe tokens name the recipient; the visible To/Cc headers still list
 * everyone, as the sender wrote them. What differs per recipient is spliced into the shared bytes: the
 * `List-Unsubscribe` header line and, when opens or clicks are tracked, the html part. The body hash of the DKIM
 * signature is computed once when the body is shared.
 */
export class ComposedMessage {
  private readonly head: Buffer
  private readonly signer: DkimHeaderSigner
  private readonly body: Array<Buffer | typeof HTML_SLOT>
  private readonly htmlEncoding?: HtmlEncoding
  private sharedBodyHash?: string
  private trackingPlan?: TrackingPlan
  private readonly messageId: string

  constructor (private readonly msg: TaskMessage, private readonly content: Content, private readonly ctx: ComposeContext) {
    const tracked = content.html !== undefined && (msg.track_opens || msg.track_clicks)
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(msg.headers)) if (!isReservedHeader(k)) headers[k] = v
    // RFC 8058: the https link of List-Unsubscribe (added per recipient) answers the one-click POST
    headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click'
    const layout = buildLayout({
      from: msg.from,
      to: msg.to,
      cc: msg.cc,
      ...(msg.reply_to !== undefined ? { replyTo: msg.reply_to } : {}),
      subject: content.subject,
      messageId: this.messageId = messageIdOf(msg.id, ctx.domain),
      headers,
      ...(content.html !== undefined ? { html: content.html } : {}),
      ...(content.text !== undefined ? { text: content.text } : {}),
      attachments: msg.attachments.map((a) => ({
        filename: a.filename,
        content: Buffer.from(a.content, 'base64'),
        ...(a.content_type !== undefined ? { contentType: a.content_type } : {}),
        ...(a.content_id !== undefined ? { contentId: a.content_id } : {})
      }))
    }, tracked)
    this.head = Buffer.from(layout.head, 'latin1')
    this.signer = new DkimHeaderSigner(ctx.dkim, this.head)
    this.body = layout.body.map((p) => p === HTML_SLOT ? p : Buffer.from(p, 'latin1'))
    if (layout.htmlEncoding !== undefined) this.htmlEncoding = layout.htmlEncoding
  }

  forRecipient (rcpt: string): RawMail {
    const { msg, ctx } = this
    const claims = { o: msg.org_id, m: msg.id, r: rcpt }
    const returnPath = encodeVerp(msg.id, rcpt, msg.return_path_host ?? defaultReturnPathHost(ctx.domain), ctx.verpKey)
    const unsubscribe = `${ctx.publicUrl}/t/u/${signToken(ctx.secret, { k: 'u', ...claims })}`
    // RFC 2369: the https link answers the one-click POST; the mailto reaches our inbound server
    const listUnsubscribeField = foldLines(`List-Unsubscribe: <${unsubscribe}>, <mailto:${returnPath}?subject=unsubscribe>`, 76)
    const listUnsubscribe = Buffer.from(`${listUnsubscribeField}\r\n`, 'latin1')
    let body: Buffer[]
    let bodyHash: string
    if (this.htmlEncoding === undefined) {
      body = this.body as Buffer[]
      bodyHash = this.sharedBodyHash ??= dkimBodyHash(body)
    } else {
      const html = Buffer.from(encodeHtml(this.trackedHtml(claims), this.htmlEncoding), 'latin1')
      body = this.body.map((p) => p === HTML_SLOT ? html : p)
      bodyHash = dkimBodyHash(body)
    }
    const signatures = Buffer.from(this.signer.sign(listUnsubscribe, bodyHash), 'latin1')
    const raw = Buffer.concat([signatures, this.head, listUnsubscribe, CRLF, ...body])
    return { envelope: { from: returnPath, to: [rcpt] }, raw, messageId: this.messageId }
  }

  private trackedHtml (claims: { o: string, m: string, r: string }): string {
    const { msg, ctx } = this
    this.trackingPlan ??= cachedTrackingPlan(this.content.html!)
    return applyTracking(this.trackingPlan, {
      ...(msg.track_opens ? { openUrl: `${ctx.publicUrl}/t/o/${signToken(ctx.secret, { k: 'o', ...claims })}` } : {}),
      ...(msg.track_clicks ? { clickUrl: (u: string) => `${ctx.publicUrl}/t/c/${signToken(ctx.secret, { k: 'c', ...claims, u })}` } : {})
    })
  }
}
