import { detectMimeType } from 'nodemailer/lib/mime-funcs'
import { renderContent, type QueuedMessage } from '../protocol/mod.ts'
import type { MessageContent } from '../stores/message_content/mod.ts'
import { submittedParts } from './submitted_content.ts'
import { templateSource } from './template_source.ts'
import { InlineImageBudget } from './inline_images.ts'

/** Decoded size of base64 text without decoding it (line breaks and padding do not count). */
export function base64Size (b64: string): number {
  let chars = 0
  let padding = 0
  for (let i = 0; i < b64.length; i++) {
    const c = b64.charCodeAt(i)
    if (c === 61) padding++ // '='
    else if (c !== 10 && c !== 13 && c !== 32 && c !== 9) chars++
  }
  return Math.floor((chars + padding) * 3 / 4) - padding
}

/**
 * The content view of a queued message (its content joined back when it was stored apart): what the recipients
 * were sent before per-recipient tracking rewrote links and added the open pixel. A template send is rendered
 * with its variables exactly as the engine renders it for sending; a message submitted by SMTP shows the parts of
 * the MIME the application wrote. Attachments are described, never copied, except small inline images (inline_images.ts).
 */
export async function contentView (msg: QueuedMessage): Promise<MessageContent> {
  const addressing = { id: msg.id, from: msg.from, to: msg.to, cc: msg.cc, reply_to: msg.reply_to ?? null }
  if (msg.submitted !== undefined) {
    const parts = await submittedParts(Buffer.from(msg.submitted.raw, 'latin1'))
    return { ...addressing, subject: msg.subject, ...parts }
  }
  const inline = new InlineImageBudget()
  const template = templateSource(msg)
  const rendered = template !== undefined
    ? renderContent(template, msg.variables ?? {})
    : { subject: msg.subject, html: msg.html, text: msg.text }
  return {
    ...addressing,
    subject: rendered.subject,
    html: rendered.html ?? null,
    text: rendered.text ?? null,
    headers: msg.headers,
    attachments: msg.attachments.map((a) => {
      const info = {
        filename: a.filename,
        content_type: a.content_type ?? detectMimeType(a.filename),
        size: base64Size(a.content),
        content_id: a.content_id ?? null
      }
      if (!inline.fits(info, info.size)) return info
      inline.take(info.size)
      return { ...info, data: a.content.replace(/\s+/g, '') }
    })
  }
}
