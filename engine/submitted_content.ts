import { MailParser, type AttachmentStream, type MessageText } from 'mailparser'
import libmime from 'libmime'
import type { AttachmentInfo } from '../stores/message_content/mod.ts'

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
 * bodies are decoded only to count their bytes and then dropped, and nothing is derived (no text from html, no
 * html from text, no link detection). `headers` are the top-level header lines other than the addressing,
 * subject, date, id and MIME structure ones, unfolded and decoded; of a repeated name the first is kept.
 */
export async function submittedParts (raw: Buffer): Promise<SubmittedParts> {
  const parser = new MailParser({ skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true })
  const out: SubmittedParts = { html: null, text: null, headers: {}, attachments: [] }
  const pending: Array<Promise<void>> = []
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
      data.content.on('data', (chunk: Buffer) => { size += chunk.length })
      data.content.on('error', reject)
      data.content.on('end', () => {
        out.attachments.push({
          filename: data.filename ?? 'attachment', content_type: data.contentType, size, content_id: data.cid ?? null
        })
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
