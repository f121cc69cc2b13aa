import { isIP } from 'node:net'
import type { HtmlFeatures } from './html_scan.ts'
import { HTML_LIMITS } from './html_limits.ts'

export type Severity = 'info' | 'warning' | 'error'

/** Everything a rule may look at, computed once per analysis. */
export interface RuleContext {
  subject: string
  html: string
  /** The plain-text part as given (may be empty). */
  text: string
  from?: string
  attachments: Array<{ filename: string }>
  scan: HtmlFeatures
  /** Visible HTML text, else the text part: what a reader sees. */
  body: string
  /** Hosts of http(s) links, lower-cased. */
  linkHosts: string[]
}

export interface Rule {
  id: string
  severity: Severity
  /** Points added to the score (0–10) when the rule fires. */
  weight: number
  /** A message when the rule fires, else undefined. */
  check: (c: RuleContext) => string | undefined
}

export const SPAM_PHRASES = [
  'act now', 'act immediately', '100% free', 'risk-free', 'risk free', 'you are a winner', 'you have been selected',
  'buy now', 'order now', 'limited time offer', 'urgent response', 'cash bonus', 'earn money', 'make money fast',
  'no credit check', '100% guaranteed', 'double your', 'viagra', 'lottery', 'free gift', 'wire transfer',
  'dear friend', 'once in a lifetime', 'special promotion', 'lowest price', 'miracle', 'get rich', 'work from home',
  'this is not spam', 'click here now', 'claim your prize', 'no strings attached'
] as const

export const URL_SHORTENERS = new Set([
  'bit.ly', 'tinyurl.com', 't.co', 'goo.gl', 'ow.ly', 'is.gd', 'buff.ly', 'rebrand.ly', 'cutt.ly', 'shorturl.at',
  'tiny.cc', 'bl.ink', 'rb.gy', 'v.gd', 's.id', 't.ly', 'lnkd.in'
])

export const RISKY_EXTENSIONS = new Set([
  'exe', 'scr', 'bat', 'cmd', 'com', 'pif', 'js', 'jse', 'vbs', 'vbe', 'wsf', 'wsh', 'jar', 'msi', 'hta', 'ps1',
  'lnk', 'iso', 'img', 'cpl', 'reg', 'dll', 'docm', 'xlsm', 'pptm', 'apk'
])

export const MAX_HTML_BYTES = 100 * 1024 // 100 KB: Gmail clips messages at about 102 KB
export const MAX_LINKS = 25
const MIN_VISIBLE_TEXT = 50

function capsRatio (s: string): { letters: number, ratio: number } {
  let letters = 0
  let upper = 0
  for (const ch of s) {
    const lo = ch.toLowerCase()
    const up = ch.toUpperCase()
    if (lo === up) continue
    letters++
    if (ch === up) upper++
  }
  return { letters, ratio: letters === 0 ? 0 : upper / letters }
}

export function hostOf (href: string): string | undefined {
  try {
    const u = new URL(href)
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.hostname.toLowerCase().replace(/^\[|\]$/g, '') : undefined
  } catch {
    return undefined
  }
}

/** The registrable part of a host, approximately: the last two labels, three under a short second level (co.uk). */
export function baseDomain (host: string): string {
  if (isIP(host) !== 0) return host
  const labels = host.replace(/\.$/, '').split('.')
  if (labels.length <= 2) return labels.join('.')
  const n = labels[labels.length - 2]!.length <= 3 && labels[labels.length - 1]!.length === 2 ? 3 : 2
  return labels.slice(-n).join('.')
}

/** A domain a link's visible text claims to go to (it looks like a URL or a host name), else undefined. */
function claimedHost (text: string): string | undefined {
  const t = text.trim().toLowerCase()
  if (t.includes(' ') || t.length > 200) return undefined
  if (/^https?:\/\//.test(t)) return hostOf(t)
  if (/^(www\.)?[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}(\/\S*)?$/.test(t)) return t.split('/')[0]
  return undefined
}

/** The rule table; docs/analyze.md lists the same rows. Scores add up and are capped at 10. */
export const RULES: readonly Rule[] = [
  {
    id: 'subject_missing', severity: 'error', weight: 2,
    check: (c) => c.subject.trim() === '' ? 'The subject is missing or empty.' : undefined
  },
  {
    id: 'subject_all_caps', severity: 'warning', weight: 1.5,
    check: (c) => {
      const r = capsRatio(c.subject)
      return r.letters >= 8 && r.ratio >= 0.7 ? 'The subject is mostly capital letters.' : undefined
    }
  },
  {
    id: 'body_all_caps', severity: 'warning', weight: 1.5,
    check: (c) => {
      const r = capsRatio(c.body)
      return r.letters >= 40 && r.ratio >= 0.6 ? 'The body is mostly capital letters.' : undefined
    }
  },
  {
    id: 'spam_phrases', severity: 'warning', weight: 1.5,
    check: (c) => {
      const hay = `${c.subject} ${c.body}`.toLowerCase()
      const found = SPAM_PHRASES.filter((p) => hay.includes(p))
      return found.length > 0 ? `Phrases common in spam: ${found.slice(0, 5).map((p) => `"${p}"`).join(', ')}.` : undefined
    }
  },
  {
    id: 'spam_phrases_many', severity: 'error', weight: 1.5,
    check: (c) => {
      const hay = `${c.subject} ${c.body}`.toLowerCase()
      const n = SPAM_PHRASES.filter((p) => hay.includes(p)).length
      return n >= 3 ? `${n} different spam phrases.` : undefined
    }
  },
  {
    id: 'excessive_punctuation', severity: 'warning', weight: 1,
    check: (c) => /[!?$€£]{3,}/.test(`${c.subject} ${c.body}`) || (c.subject.match(/!/g)?.length ?? 0) >= 3
      ? 'Runs of "!", "?" or currency signs (such as "!!!" or "$$$").'
      : undefined
  },
  {
    id: 'image_only', severity: 'error', weight: 2.5,
    check: (c) => c.scan.images > 0 && c.scan.text.length < MIN_VISIBLE_TEXT && c.text.trim().length < MIN_VISIBLE_TEXT
      ? 'The message is images with little or no text.'
      : undefined
  },
  {
    id: 'missing_text_part', severity: 'info', weight: 0.5,
    check: (c) => c.html.trim() !== '' && c.text.trim() === ''
      ? 'There is no plain-text part; add `text` for clients and filters that read it.'
      : undefined
  },
  {
    id: 'link_text_mismatch', severity: 'error', weight: 2.5,
    check: (c) => {
      for (const l of c.scan.links) {
        const claimed = claimedHost(l.text)
        const real = hostOf(l.href)
        if (claimed !== undefined && real !== undefined && baseDomain(claimed) !== baseDomain(real)) {
          return `A link shows "${claimed}" but goes to "${real}".`
        }
      }
      return undefined
    }
  },
  {
    id: 'url_shortener', severity: 'warning', weight: 1.5,
    check: (c) => {
      const h = c.linkHosts.find((x) => URL_SHORTENERS.has(x))
      return h !== undefined ? `A link uses the URL shortener ${h}.` : undefined
    }
  },
  {
    id: 'ip_address_url', severity: 'error', weight: 2,
    check: (c) => {
      const h = c.linkHosts.find((x) => isIP(x) !== 0)
      return h !== undefined ? `A link points to a bare IP address (${h}).` : undefined
    }
  },
  {
    id: 'missing_unsubscribe', severity: 'warning', weight: 1,
    check: (c) => {
      if (c.html.trim() === '' && c.text.trim() === '') return undefined
      const has = c.scan.links.some((l) => /unsubscribe|opt[- ]?out/i.test(l.text) || /unsubscribe|opt[-_]?out/i.test(l.href)) ||
        /unsubscribe|\{\{\s*unsubscribe_url\s*\}\}/i.test(c.text)
      return has ? undefined : 'No unsubscribe link in the body.'
    }
  },
  {
    id: 'html_too_large', severity: 'warning', weight: 1,
    check: (c) => Buffer.byteLength(c.html) > MAX_HTML_BYTES
      ? `The HTML is ${Math.round(Buffer.byteLength(c.html) / 1024)} KB; Gmail clips messages over about 100 KB.`
      : undefined
  },
  {
    id: 'html_unbalanced', severity: 'warning', weight: 1,
    check: (c) => c.scan.unclosed > 0 ? `${c.scan.unclosed} HTML element(s) are never closed.` : undefined
  },
  {
    id: 'html_not_analyzed', severity: 'warning', weight: 2,
    check: (c) => {
      switch (c.scan.stoppedAt) {
        case undefined: return undefined
        case 'depth': return `The HTML nests elements more than ${HTML_LIMITS.maxDepth} deep; the rules that read it were skipped.`
        case 'elements': return `The HTML has more than ${HTML_LIMITS.maxElements} elements; the rules that read it were skipped.`
        case 'attributes':
          return `An HTML element has more than ${HTML_LIMITS.maxAttributes} attributes; the rules that read the HTML were skipped.`
        case 'time': return `The HTML could not be read within ${HTML_LIMITS.timeBudgetMs} ms; the rules that read it were skipped.`
      }
    }
  },
  {
    id: 'too_many_links', severity: 'warning', weight: 1,
    check: (c) => c.scan.links.length > MAX_LINKS ? `${c.scan.links.length} links (more than ${MAX_LINKS}).` : undefined
  },
  {
    id: 'hidden_text', severity: 'error', weight: 2,
    check: (c) => c.scan.hiddenTextChars >= 20
      ? `${c.scan.hiddenTextChars} characters of text are hidden (display:none, tiny font or similar).`
      : undefined
  },
  {
    id: 'active_content', severity: 'error', weight: 3,
    check: (c) => c.scan.activeContent.length > 0
      ? `Scripts, forms or frames, which mail clients block: ${[...new Set(c.scan.activeContent)].slice(0, 5).join(', ')}.`
      : undefined
  },
  {
    id: 'from_name_mismatch', severity: 'warning', weight: 1.5,
    check: (c) => {
      const m = c.from === undefined ? null : /^\s*"?([^"<]*)"?\s*<([^>]+)>\s*$/.exec(c.from)
      if (m === null) return undefined
      const shown = /[a-z0-9.-]+\.[a-z]{2,}/i.exec(m[1]!)?.[0]?.toLowerCase()
      const actual = m[2]!.split('@')[1]?.toLowerCase()
      if (shown === undefined || actual === undefined || baseDomain(shown.split('@').pop()!) === baseDomain(actual)) return undefined
      return `The sender name shows "${shown}" but the address is at ${actual}.`
    }
  },
  {
    id: 'suspicious_attachment', severity: 'error', weight: 3,
    check: (c) => {
      const bad = c.attachments.map((a) => a.filename.toLowerCase()).filter((n) => RISKY_EXTENSIONS.has(n.split('.').pop() ?? ''))
      return bad.length > 0 ? `Attachments with executable or macro file types: ${bad.slice(0, 5).join(', ')}.` : undefined
    }
  },
  {
    id: 'insecure_links', severity: 'info', weight: 0.3,
    check: (c) => c.scan.links.some((l) => /^http:\/\//i.test(l.href)) ? 'Some links use http:// rather than https://.' : undefined
  }
]
