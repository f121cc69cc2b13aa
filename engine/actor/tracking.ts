import type { Parser } from 'htmlparser2'
import { isTrackableUrl, parseHtmlWithin } from '../../protocol/mod.ts'

/**
 * Open and click tracking: links (`<a href="http(s)://…">`, see `isTrackableUrl`) are pointed at `{public}/t/c/TOKEN`
 * and a 1×1 pixel `{public}/t/o/TOKEN` is placed before `</body>` (or at the end). The HTML is tokenised with htmlparser2
 * once per distinct body and only the `href` attributes are spliced per recipient, so everything else stays byte for
 * byte as the sender wrote it.
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

/**
 * Where the tracked pieces go in one html body: the trackable links (`[start, end)` spans the whole `href`
 * attribute) and the first `</body>`. Found with one htmlparser2 pass per distinct body; each recipient's html is
 * then spliced from it without parsing again.
 */
export interface TrackingPlan {
  readonly html: string
  readonly links: ReadonlyArray<{ start: number, end: number, url: string }>
  /** Offset of the first `</body>`, or -1. */
  readonly bodyClose: number
  /** The html went past the parsing limits: its links stay as written. */
  readonly stopped: boolean
}

export function planTracking (html: string): TrackingPlan {
  const links: Array<{ start: number, end: number, url: string }> = []
  let bodyClose = -1
  let inAnchor = false
  const stoppedAt = parseHtmlWithin(html, (parser: Parser) => ({
    onopentagname (name) { inAnchor = name === 'a' },
    onattribute (name, value) {
      if (!inAnchor || name !== 'href') return
      const url = value.trim()
      // The value is entity-decoded (`&#13;&#10;` is CR LF): a link that is not a clean http(s) URL stays as written, untracked.
      if (!isTrackableUrl(url)) return
      // [startIndex, endIndex) spans the whole attribute: name, "=" and the (quoted) value
      links.push({ start: parser.startIndex, end: parser.endIndex, url })
    },
    onopentag () { inAnchor = false },
    onclosetag (name) { if (name === 'body' && bodyClose === -1) bodyClose = parser.startIndex }
  }), { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true })
  return { html, links, bodyClose, stopped: stoppedAt !== undefined }
}

/** One recipient's html: the plan's links pointed at `clickUrl`, the open pixel before `</body>` (or at the end). */
export function applyTracking (plan: TrackingPlan, links: TrackingLinks): string {
  const { html, bodyClose } = plan
  const pixel = links.openUrl === undefined
    ? ''
    : `<img src="${escapeAttr(links.openUrl)}" width="1" height="1" alt="" style="display:none;border:0" />`
  if (plan.stopped) return html + pixel
  const edits = links.clickUrl === undefined ? [] : plan.links
  let out = ''
  let at = 0
  for (const e of edits) {
    if (pixel !== '' && bodyClose !== -1 && bodyClose < e.start && at <= bodyClose) {
      out += html.slice(at, bodyClose) + pixel
      at = bodyClose
    }
    out += html.slice(at, e.start) + `href="${escapeAttr(links.clickUrl!(e.url))}"`
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

export function rewriteHtml (html: string, links: TrackingLinks): string {
  return applyTracking(planTracking(html), links)
}

const PLAN_CACHE_ENTRIES = 32
const PLAN_CACHE_MAX_CHARS = 128 * 1024 // at most 32 × 128 K characters kept per thread
const plans = new Map<string, TrackingPlan>()

/**
 * The plan of `html`, from a small per-thread cache: mail sent from one template without per-message variables
 * has the same html every time. Least recently used first out; large bodies are planned but not kept.
 */
export function cachedTrackingPlan (html: string): TrackingPlan {
  const hit = plans.get(html)
  if (hit !== undefined) {
    plans.delete(html)
    plans.set(html, hit)
    return hit
  }
  const plan = planTracking(html)
  if (html.length <= PLAN_CACHE_MAX_CHARS) {
    if (plans.size >= PLAN_CACHE_ENTRIES) plans.delete(plans.keys().next().value!)
    plans.set(html, plan)
  }
  return plan
}
