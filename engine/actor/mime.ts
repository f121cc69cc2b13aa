import MimeNode from 'nodemailer/lib/mime-node'
import { detectMimeType } from 'nodemailer/lib/mime-funcs'
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp'
import { encode as base64Encode, wrap as base64Wrap } from 'nodemailer/lib/base64'

/**
 * The MIME bytes of one message, built once and shared by all its recipients. nodemailer's MimeNode encodes every
 * header (addresses, RFC 2047 words, RFC 2231 file names, folding) and its qp/base64 modules encode the content;
 * this module only lays the parts out, synchronously into strings, instead of nodemailer's per-message stream of
 * streams. Every byte is ASCII: headers are encoded words, content is 7bit (plain ASCII, short lines only),
 * quoted-printable or base64, all with lines of at most 76 characters.
 *
 * The html part is a slot when it differs per recipient (tracked links and pixel): its headers are shared, its
 * encoded content is spliced in by `encodeHtml`. Layout: `multipart/mixed` [ body, attachments… ] when there are
 * attachments; the body is `multipart/alternative` [ text, html ] when both exist, else the one part. Attachments
 * with a Content-ID are inline: the html part becomes `multipart/related` [ html, inline parts… ] (RFC 2387), so
 * `cid:` references in the html resolve to them; without html they are ordinary attachments.
 */
export interface MimeAttachment {
  filename: string
  content: Buffer
  contentType?: string
  /** Without angle brackets. */
  contentId?: string
}

export interface MimeMessage {
  from: string
  to: string[]
  cc: string[]
  replyTo?: string
  subject: string
  /** With angle brackets. */
  messageId: string
  /** The sender's own header fields, after the standard ones. */
  headers: Readonly<Record<string, string>>
  html?: string
  text?: string
  attachments: MimeAttachment[]
}

export const HTML_SLOT = Symbol('html slot')
export type HtmlEncoding = 'quoted-printable' | 'base64'

export interface MessageLayout {
  /** The header block without the blank line that ends it; every line ends with CRLF. */
  head: string
  /** The body: shared bytes, with the slot where each recipient's html goes when `htmlSlot` says it differs. */
  body: Array<string | typeof HTML_SLOT>
  /** The transfer encoding of the slotted html part, when there is a slot. */
  htmlEncoding?: HtmlEncoding
}

const LINE = 76

function crlf (text: string): string {
  return text.replace(/\r\n|\r|\n/g, '\r\n')
}

/** The html content as its part declares it (`encoding` from the layout). */
export function encodeHtml (html: string, encoding: HtmlEncoding): string {
  return encoding === 'base64' ? base64Wrap(base64Encode(Buffer.from(html, 'utf8')), LINE) : qpWrap(qpEncode(crlf(html)), LINE)
}

/** After `buildHeaders`, which chose the transfer encoding and wrote it to the header (choosing scans the content). */
function encodeContent (node: MimeNode): string {
  const content = node.content as string | Buffer
  switch (node.getHeader('Content-Transfer-Encoding')) {
    case 'base64': return base64Wrap(base64Encode(typeof content === 'string' ? Buffer.from(content, 'utf8') : content), LINE)
    case 'quoted-printable': return qpWrap(qpEncode(typeof content === 'string' ? crlf(content) : content), LINE)
    default: return crlf(content.toString())
  }
}

/**
 * Builds the layout. `htmlPerRecipient`: the html part's content is left as a slot; its encoding is chosen from
 * the html as written (tracking adds only ASCII) and is quoted-printable even for plain ASCII, since the added
 * links may lengthen a line past what 7bit allows.
 */
export function buildLayout (m: MimeMessage, htmlPerRecipient: boolean): MessageLayout {
  const text = m.text ?? (m.html === undefined ? '' : undefined)
  const alternative = text !== undefined && m.html !== undefined
  const inline = m.html !== undefined ? m.attachments.filter((a) => a.contentId !== undefined) : []
  const attached = m.attachments.filter((a) => !inline.includes(a))
  const mixed = attached.length > 0
  const htmlType = inline.length > 0 ? 'multipart/related' : 'text/html'
  const bodyType = alternative ? 'multipart/alternative' : m.html !== undefined ? htmlType : 'text/plain'
  const root = new MimeNode(mixed ? 'multipart/mixed' : bodyType, { disableFileAccess: true, disableUrlAccess: true })
  root.setHeader('From', m.from)
  root.setHeader('To', m.to)
  if (m.cc.length > 0) root.setHeader('Cc', m.cc)
  if (m.replyTo !== undefined) root.setHeader('Reply-To', m.replyTo)
  root.setHeader('Subject', m.subject)
  root.setHeader('Message-ID', m.messageId)
  for (const [key, value] of Object.entries(m.headers)) root.addHeader(key, value)

  let htmlNode: MimeNode | undefined
  let htmlEncoding: HtmlEncoding | undefined
  const bodyNode = mixed ? root.createChild(bodyType) : root
  // without alternatives the body node is the one text part itself
  const part = (type: string): MimeNode => alternative ? bodyNode.createChild(type) : bodyNode
  if (text !== undefined) part('text/plain').setContent(text)
  if (m.html !== undefined) {
    const htmlParent = inline.length > 0 ? part('multipart/related') : undefined
    htmlNode = (htmlParent?.createChild('text/html') ?? part('text/html')).setContent(m.html)
    for (const a of inline) {
      const node = htmlParent!.createChild(a.contentType ?? detectMimeType(a.filename), { filename: a.filename }).setContent(a.content)
      node.setHeader('Content-Disposition', 'inline')
      node.setHeader('Content-ID', `<${a.contentId!}>`)
    }
    if (htmlPerRecipient) {
      htmlEncoding = htmlNode.getTransferEncoding() === 'base64' ? 'base64' : 'quoted-printable'
      htmlNode.setHeader('Content-Transfer-Encoding', htmlEncoding)
    }
  }
  for (const a of attached) {
    root.createChild(a.contentType ?? detectMimeType(a.filename), { filename: a.filename }).setContent(a.content)
  }

  const slot = htmlPerRecipient ? htmlNode : undefined
  const head = root.buildHeaders() + '\r\n'
  const body: MessageLayout['body'] = []
  let pending = ''
  const emit = (node: MimeNode): void => {
    if (node.multipart !== false && node.multipart !== undefined) {
      node.childNodes.forEach((child, i) => {
        pending += `${i > 0 ? '\r\n' : ''}--${String(node.boundary)}\r\n${child.buildHeaders()}\r\n\r\n`
        emit(child)
      })
      pending += `\r\n--${String(node.boundary)}--\r\n`
    } else if (node === slot) {
      body.push(pending, HTML_SLOT)
      pending = ''
    } else {
      pending += encodeContent(node)
    }
  }
  emit(root)
  if (pending !== '') body.push(pending)
  return htmlEncoding !== undefined && slot !== undefined ? { head, body, htmlEncoding } : { head, body }
}
