import type { Parser } from 'htmlparser2'
import { isTrackableUrl, parseHtmlWithin } from '../../protocol/mod.ts'

/**
 * Open and click tracking: links (`<a href="http(s)://…">`, see `isTrackableUrl`) are pointed at `{public}/t/c/TOKEN`
 * and a 1×1 pixel `{public}/t/o/TOKEN` is placed before `</body>` (or at the end). The HTML is tokenised with htmlparser2
 * and only the `href` attributes are spliced, so everything else stays byte for byte as the sender wrote it.
 *
 * HTML past the parsing limits (HTML_LIMITS: nesting, elements, attributes, time) is sent with its links as written:
 * clicks are not tracked in that message, the open pixel is still appended, and the message is never held back.
 */
export interface TrackingLinks {
  /** URL of the open pixel, or undefined when opens are not tracked. */
  openUrl?: string
  /** Maps an original URL to its tracked URL, or undefined when clicks are not tracked. */
  clickUrl?: (original: string) => string
}

function escapeAttr (value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
}

export function rewriteHtml (html: string, links: TrackingLinks): string {
  const edits: Array<{ start: number, end: number, text: string }> = []
  let bodyClose = -1
  let inAnchor = false
  const stoppedAt = parseHtmlWithin(html, (parser: Parser) => ({
    onopentagname (name) { inAnchor = name === 'a' },
    onattribute (name, value) {
      if (!inAnchor || name !== 'href' || links.clickUrl === undefined) return
      const url = value.trim()
      // The value is entity-decoded (`&#13;&#10;` is CR LF): a link that is not a clean http(s) URL stays as written, untracked.
      if (!isTrackableUrl(url)) return
      // [startIndex, endIndex) spans the whole attribute: name, "=" and the (quoted) value
      edits.push({ start: parser.startIndex, end: parser.endIndex, text: `href="${escapeAttr(links.clickUrl(url))}"` })
    },
    onopentag () { inAnchor = false },
    onclosetag (name) { if (name === 'body' && bodyClose === -1) bodyClose = parser.startIndex }
  }), { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true })
  const pixel = links.openUrl === undefined ? '' : `<img src="${escapeAttr(links.openUrl)}" width="1" height="1" alt="" style="display:none;border:0" />`
  if (stoppedAt !== undefined) return html + pixel
  let out = ''
  let at = 0
  for (const e of edits) {
    if (pixel !== '' && bodyClose !== -1 && bodyClose < e.start && at <= bodyClose) {
      out += html.slice(at, bodyClose) + pixel
      at = bodyClose
    }
    out += html.slice(at, e.start) + e.text
    at = e.end
  }
  if (pixel !== '' && bodyClose >= at) {
    out += html.slice(at, bodyClose) + pixel
    at = bodyClose
  }
  out += html.slice(at)
  if (pixel !== '' && bodyClose === -1) out += pixel
  return out
}
