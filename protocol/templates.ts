/**
 * Template rendering shared by the API (validation) and the delivery engine (sending).
 *
 * `{{name}}` (spaces inside the braces allowed) is replaced by `variables.name`; a dotted name
 * (`{{user.first}}`) is first looked up as a key as written, then as a path into nested objects.
 * Values are converted with String(); missing, null and undefined values and objects render as the
 * empty string (a send refuses them unless it allows blanks: `missingVariables`). In `html` every value is
 * HTML-escaped; in `subject` and `text` values are inserted as they are. Any CR or LF a value would bring into
 * the subject is replaced by a space, so a variable can never add a header line.
 */
export interface TemplateContent { subject: string, html: string, text?: string }

export type TemplateVariables = Readonly<Record<string, unknown>>

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*\}\}/g
const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml (value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!)
}

/** The value `name` resolves to, or undefined when it resolves to nothing printable (absent, null, an object). */
function resolve (variables: TemplateVariables, name: string): string | number | boolean | undefined {
  let value: unknown = Object.hasOwn(variables, name) ? variables[name] : undefined
  if (value === undefined && name.includes('.')) {
    value = variables
    for (const part of name.split('.')) {
      if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) { value = undefined; break }
      value = (value as Record<string, unknown>)[part]
    }
  }
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : undefined
}

function lookup (variables: TemplateVariables, name: string): string {
  const value = resolve(variables, name)
  return value === undefined ? '' : String(value)
}

function fill (source: string, variables: TemplateVariables, encode: (v: string) => string): string {
  return source.replace(PLACEHOLDER, (_m, name: string) => encode(lookup(variables, name)))
}

/** What a message is rendered from: a template, or a queued message's copy of one; a part it lacks stays absent. */
export interface MessageContent { subject: string, html?: string, text?: string }

export function renderContent (content: MessageContent, variables: TemplateVariables = {}): MessageContent {
  const out: MessageContent = { subject: fill(content.subject, variables, (v) => v.replace(/[\r\n]+/g, ' ')) }
  if (content.html !== undefined) out.html = fill(content.html, variables, escapeHtml)
  if (content.text !== undefined) out.text = fill(content.text, variables, (v) => v)
  return out
}

export function renderTemplate (tpl: TemplateContent, variables: TemplateVariables = {}): TemplateContent {
  // a template always has html, so its rendering has too
  return renderContent(tpl, variables) as TemplateContent
}

/**
 * The placeholder names `content` uses that `variables` gives no value for (absent, null, or an object), in order of
 * first appearance. A send with any is refused (422) unless it allows blanks (`allow_missing_variables`).
 */
export function missingVariables (content: MessageContent, variables: TemplateVariables = {}): string[] {
  const missing = new Set<string>()
  for (const source of [content.subject, content.html ?? '', content.text ?? '']) {
    for (const m of source.matchAll(PLACEHOLDER)) if (resolve(variables, m[1]!) === undefined) missing.add(m[1]!)
  }
  return [...missing]
}

/** The distinct placeholder names a template uses, in order of first appearance. */
export function templateVariables (tpl: TemplateContent): string[] {
  const names = new Set<string>()
  for (const source of [tpl.subject, tpl.html, tpl.text ?? '']) for (const m of source.matchAll(PLACEHOLDER)) names.add(m[1]!)
  return [...names]
}
