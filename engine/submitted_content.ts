import { MailParser, type AttachmentStream, type MessageText } from 'mailparser'
import libmime from 'libmime'
import type { AttachmentInfo } from '../stores/message_content/mod.ts'
import { InlineImageBudget } from './inline_images.ts'

/** What the content view shows of a message submitted by SMTP: its text and html parts, headers, attachments. */
export interface SubmittedParts {
  html: string | null
  text: string | null
  headers: Record<string, string>
  attachments: AttachmentInfo[]
}

/** Headers the content view shows as fields of their own (or that every message has): not listed among `headers`. */
const SHOWN_APART = new Set([
  'from', 'to', 'cc', 'bcc', 'reply-to', 'subject', 'date', 'message-id', 'mime-version', 'content-type', 'content-transfer-encoding'
])

/**
 * Reads the parts of a submitted message in one streaming pass, so the cost grows linearly with its size: the
 * text/plain and text/html parts are kept (several of one kind joined as mailparser joins them), attachment
 * bodies are decoded only to count their bytes and then dropped (small inline images aside, inline_images.ts), and
 * nothing is derived (no text from html, no html from text, no link detection). `headers` are the top-level header
 * lines other than the addressing, subject, date, id and MIME structure ones, unfolded and decoded; of a repeated
 * name the first is kept.
 */
export async function submittedParts (raw: Buffer): Promise<SubmittedParts> {
  const parser = new MailParser({ skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true })
  const out: SubmittedParts = { html: null, text: null, headers: {}, attachments: [] }
  const pending: Array<Promise<void>> = []
  const inline = new InlineImageBudget()
  parser.on('headerLines', (lines: Array<{ key: string, line: string }>) => {
    for (const { key, line } of lines) {
      if (SHOWN_APART.has(key) || key.startsWith('content-')) continue
      const colon = line.indexOf(':')
      const name = line.slice(0, colon).trim()
      if (name === '' || Object.hasOwn(out.headers, name)) continue
      out.headers[name] = libmime.decodeWords(line.slice(colon + 1).replace(/\r?\n[ \t]+/g, ' ').trim())
    }
  })
  parser.on('data', (data: AttachmentStream | MessageText) => {
    if (data.type === 'text') {
      if (typeof data.html === 'string') out.html = data.html
      if (typeof data.text === 'string') out.text = data.text
      return
    }
    pending.push(new Promise<void>((resolve, reject) => {
      let size = 0
      const described = { content_id: data.cid ?? null, content_type: data.contentType }
      // the bytes of an inline image are kept while they fit its bounds, and dropped as soon as they do not
      let kept: Buffer[] | undefined = inline.fits(described, 0) ? [] : undefined
      data.content.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (kept !== undefined && inline.fits(described, size)) kept.push(chunk)
        else kept = undefined
      })
      data.content.on('error', reject)
      data.content.on('end', () => {
        const info: AttachmentInfo = {
          filename: data.filename ?? 'attachment', content_type: data.contentType, size, content_id: data.cid ?? null
        }
        if (kept !== undefined && size > 0) {
          inline.take(size)
          info.data = Buffer.concat(kept).toString('base64')
        }
        out.attachments.push(info)
        data.release()
        resolve()
      })
    }))
  })
  await new Promise<void>((resolve, reject) => {
    parser.on('error', reject)
    parser.on('end', resolve)
    parser.end(raw)
  })
  await Promise.all(pending)
  return out
}
