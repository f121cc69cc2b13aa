import { OutboxApiError, type GetMessagesByIdContentResponse } from '../../../client/src/mod.ts'
import { fill, h, table } from '../dom.ts'
import { errorBox } from '../errors.ts'
import type { ViewContext } from '../view.ts'

type Content = GetMessagesByIdContentResponse

/**
 * The policy the shown HTML runs under, on top of the frame's `sandbox=""` (no scripts, no same-origin, no forms,
 * no popups): nothing is fetched from anywhere, so opening a message never tells its links' or images' servers
 * that it was viewed; only inline images (`data:`) and inline styles apply.
 */
export const CONTENT_CSP = "default-src 'none'; img-src data: cid:; style-src 'unsafe-inline'; font-src data:"

/** The frame's document: the policy first, so it is in force before any of the message's markup is read. */
export function contentSrcdoc (html: string): string {
  return `<!DOCTYPE html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${CONTENT_CSP}">${html}`
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
    c.html === null
      ? h('p', { class: 'empty' }, 'No HTML part.')
      : h('iframe', {
        sandbox: '',
        class: 'preview message-html',
        title: 'HTML part of the message',
        srcdoc: contentSrcdoc(c.html),
        'data-testid': 'content-html'
      }),
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
