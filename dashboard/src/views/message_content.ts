import { OutboxApiError, type GetMessagesByIdContentResponse } from '../../../client/src/mod.ts'
import { fill, h, table } from '../dom.ts'
import { errorBox } from '../errors.ts'
import type { ViewContext } from '../view.ts'

type Content = GetMessagesByIdContentResponse

/**
 * The policy the shown HTML runs under, on top of the frame's `sandbox=""` (no scripts, no same-origin, no forms,
 * no popups): nothing is fetched from anywhere, so opening a message never tells its links' or images' servers
 * that it was viewed; only inline images (`data:`, the message's `cid:` images among them) and inline styles apply.
 */
export const CONTENT_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:"
/** The same once the reader asked for remote images: images may then come from anywhere, nothing else may. */
export const CONTENT_CSP_REMOTE_IMAGES = "default-src 'none'; img-src data: http: https:; style-src 'unsafe-inline'; font-src data:"

/** The frame's document: the policy first, so it is in force before any of the message's markup is read. */
export function contentSrcdoc (html: string, policy = CONTENT_CSP): string {
  return `<!DOCTYPE html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${policy}">${html}`
}

const IMAGE_TYPE = /^image\/(png|jpeg|gif|webp)$/
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** A `cid:` reference in an attribute or a CSS `url()`, up to its closing quote, bracket or space. */
const CID_REF = /cid:([^"'\s)>]+)/gi

/**
 * The HTML with its `cid:` references to inline images replaced by `data:` URIs of the images the content keeps
 * (an image too large to keep, or never attached, stays a `cid:` reference and shows as missing).
 */
export function inlineImages (html: string, attachments: Content['attachments']): string {
  const byId = new Map<string, string>()
  for (const a of attachments) {
    // only a plain image type and base64 go into the URI: nothing from the message can close the attribute it lands in
    const type = a.content_type.split(';')[0]!.trim().toLowerCase()
    if (a.content_id === null || a.data === undefined || !IMAGE_TYPE.test(type) || !BASE64.test(a.data)) continue
    byId.set(a.content_id.toLowerCase(), `data:${type};base64,${a.data}`)
  }
  if (byId.size === 0) return html
  return html.replace(CID_REF, (ref: string, id: string) => {
    let key = id
    try { key = decodeURIComponent(id) } catch { /* a stray % stays as written */ }
    return byId.get(key.toLowerCase()) ?? ref
  })
}

/** An image or background the HTML would fetch from another server: `src=`, `background=` or CSS `url()` over http(s). */
const REMOTE_IMAGE = /(?:\ssrc|\sbackground|\ssrcset)\s*=\s*["']?\s*(?:https?:)?\/\/|url\(\s*["']?\s*(?:https?:)?\/\//i

export function hasRemoteImages (html: string): boolean {
  return REMOTE_IMAGE.test(html)
}

/**
 * The HTML part in its sandboxed frame. Remote images are hidden (the frame's policy fetches nothing); when the HTML
 * has some, a notice says so, and its button shows them by giving the frame its document again under a policy that
 * lets images (and only images) load.
 */
function htmlFrame (c: Content & { html: string }): HTMLElement {
  const html = inlineImages(c.html, c.attachments)
  const frame = h('iframe', {
    sandbox: '',
    class: 'preview message-html',
    title: 'HTML part of the message',
    srcdoc: contentSrcdoc(html),
    'data-testid': 'content-html'
  })
  if (!hasRemoteImages(html)) return frame
  const button = h('button', { type: 'button', class: 'small secondary', 'data-testid': 'show-remote-images' }, 'Show remote images')
  const notice = h('p', { class: 'notice', 'data-testid': 'remote-images' },
    'Remote images hidden: showing them tells their servers that the message was opened, and from where. ', button)
  button.onclick = () => {
    frame.srcdoc = contentSrcdoc(html, CONTENT_CSP_REMOTE_IMAGES)
    notice.replaceChildren('Remote images shown.')
  }
  return h('div', null, notice, frame)
}

function size (bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}

function show (c: Content): HTMLElement[] {
  const headers = Object.entries(c.headers)
  return [
    h('dl', { class: 'sent' },
      h('dt', null, 'Subject'), h('dd', { 'data-testid': 'content-subject' }, c.subject),
      h('dt', null, 'Reply-To'), h('dd', null, c.reply_to ?? '—'),
      headers.length > 0 && [
        h('dt', null, 'Headers'),
        h('dd', null, h('pre', { class: 'raw wrap' }, headers.map(([k, v]) => `${k}: ${v}`).join('\n')))
      ]),
    h('h3', null, 'HTML'),
    c.html === null ? h('p', { class: 'empty' }, 'No HTML part.') : htmlFrame({ ...c, html: c.html }),
    h('h3', null, 'Text'),
    c.text === null ? h('p', { class: 'empty' }, 'No text part.') : h('pre', { class: 'raw wrap', 'data-testid': 'content-text' }, c.text),
    h('h3', null, 'Attachments'),
    h('div', { 'data-testid': 'content-attachments' },
      table('Attachments', ['File', 'Type', 'Size', 'Content-ID'], c.attachments.map((a) => [
        a.filename, a.content_type, size(a.size), a.content_id ?? '—'
      ]), 'No attachments.'))
  ]
}

/** A 404 whose content will not come: the installation records none, or it was kept its days and is gone. */
function neverComing (err: OutboxApiError): boolean {
  return err.details?.reason === 'recording_off' || err.details?.reason === 'expired'
}

/**
 * The message as it was rendered for sending (GET /v1/messages/{id}/content). The engine records it a moment after
 * the send is accepted; until then the section says so, and `retry()` (called on the message's live events) tries
 * again. Content that is not available (not recorded on this installation, or no longer kept) is said in the API's
 * words, as a note rather than an error, and not asked for again.
 */
export function contentSection (ctx: ViewContext, id: string): { el: HTMLElement, retry: () => void } {
  const body = h('div', { 'data-testid': 'content' }, h('p', { class: 'loading' }, 'Loading…'))
  let settled = false
  async function load (): Promise<void> {
    try {
      fill(body, show(await ctx.session.client.messages.content(id)))
      settled = true
    } catch (err) {
      if (err instanceof OutboxApiError && err.status === 404) {
        fill(body, h('p', { class: 'empty', 'data-testid': 'content-missing' }, err.message))
        settled = neverComing(err)
      } else {
        fill(body, errorBox(err))
      }
    }
  }
  void load()
  return {
    el: h('section', { 'aria-labelledby': 'content-heading' }, h('h2', { id: 'content-heading' }, 'Content'), body),
    retry: () => { if (!settled) void load() }
  }
}
