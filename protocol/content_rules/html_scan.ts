import { HTML_LIMITS, parseHtmlWithin, type HtmlLimit, type HtmlLimits } from './html_limits.ts'

/** What the rules need to know about an HTML body, gathered in one streaming pass of htmlparser2. */
export interface HtmlFeatures {
  /** Visible text (outside script/style/hidden elements), whitespace collapsed. */
  text: string
  hiddenTextChars: number
  images: number
  links: Array<{ href: string, text: string }>
  /** script, form, iframe, object, embed elements, `on*` handler attributes, `javascript:` URLs */
  activeContent: string[]
  /** Non-void elements the author left open (closed only by the parser, at a parent's end or the document's). */
  unclosed: number
  /** Set when the HTML went past a parsing limit (html_limits.ts): the fields above then describe only a part of it. */
  stoppedAt?: HtmlLimit
}

const VOID = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr', 'param', 'keygen'
])
/** Elements whose end tag HTML allows to omit; leaving them open is not an error. */
const OPTIONAL_END = new Set([
  'p', 'li', 'dt', 'dd', 'tr', 'td', 'th', 'thead', 'tbody', 'tfoot', 'option', 'optgroup', 'colgroup', 'caption', 'rp', 'rt',
  'html', 'head', 'body'
])
const INVISIBLE = new Set(['script', 'style', 'head', 'title', 'noscript', 'template'])
const ACTIVE = new Set(['script', 'form', 'iframe', 'object', 'embed', 'frame', 'frameset', 'applet'])
const HIDDEN_STYLE = /display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*[01](?:\.\d+)?(?:px|pt)?\s*(?:;|$|!)|opacity\s*:\s*0(?:\.0+)?\s*(?:;|$|!)|max-height\s*:\s*0(?:px)?\s*(?:;|$|!)/i

function isHidden (attribs: Record<string, string>): boolean {
  if ('hidden' in attribs) return true
  const style = attribs.style
  return style !== undefined && HIDDEN_STYLE.test(style)
}

export function scanHtml (html: string, limits: HtmlLimits = HTML_LIMITS): HtmlFeatures {
  const f: HtmlFeatures = { text: '', hiddenTextChars: 0, images: 0, links: [], activeContent: [], unclosed: 0 }
  const textParts: string[] = []
  // One entry per open non-void element: whether it hides its content and whether it is invisible by nature.
  const stack: Array<{ name: string, hidden: boolean, invisible: boolean }> = []
  let hiddenDepth = 0
  let invisibleDepth = 0
  let openLink: { href: string, text: string } | undefined
  // The parser hands over one text node in several pieces (at entities, between input slices): a piece that starts
  // where the last one ended continues it, anything else is a new run, set apart by a space.
  let textEnd = -1

  const stoppedAt = parseHtmlWithin(html, (parser) => ({
    onopentag (name, attribs) {
      if (name === 'img') f.images++
      if (ACTIVE.has(name)) f.activeContent.push(`<${name}>`)
      for (const a in attribs) {
        if (a.startsWith('on')) f.activeContent.push(`${a} attribute`)
        else if ((a === 'href' || a === 'src' || a === 'action') && /^\s*javascript:/i.test(attribs[a]!)) f.activeContent.push('javascript: URL')
      }
      if (name === 'a' && attribs.href !== undefined) {
        openLink = { href: attribs.href.trim(), text: '' }
        f.links.push(openLink)
      }
      if (VOID.has(name)) return
      const hidden = isHidden(attribs)
      const invisible = INVISIBLE.has(name)
      if (hidden) hiddenDepth++
      if (invisible) invisibleDepth++
      stack.push({ name, hidden, invisible })
    },
    ontext (data) {
      if (invisibleDepth > 0) return
      if (hiddenDepth > 0) {
        f.hiddenTextChars += data.replace(/\s+/g, '').length
        return
      }
      if (parser.startIndex === textEnd + 1 && textParts.length > 0) textParts[textParts.length - 1] += data
      else textParts.push(data)
      textEnd = parser.endIndex
      if (openLink !== undefined) openLink.text += data
    },
    onclosetag (name, isImplied) {
      if (VOID.has(name)) return
      const top = stack.pop()
      if (top === undefined) return
      if (top.hidden) hiddenDepth--
      if (top.invisible) invisibleDepth--
      if (name === 'a') openLink = undefined
      if (isImplied && !OPTIONAL_END.has(name)) f.unclosed++
    }
  }), { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true }, limits)
  if (stoppedAt !== undefined) f.stoppedAt = stoppedAt
  f.text = textParts.join(' ').replace(/\s+/g, ' ').trim()
  for (const l of f.links) l.text = l.text.replace(/\s+/g, ' ').trim()
  return f
}
