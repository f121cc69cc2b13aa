/**
 * `{{var}}` templates: a placeholder is replaced by the variable's value, HTML-escaped in `html`, as is in
 * `subject` and `text`; an unknown variable renders as the empty string. Same contract as
 * engine/protocol/templates.ts `renderTemplate`, kept local until that module is merged.
 */
export interface TemplateContent { subject: string, html: string, text?: string }

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml (value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
}

function fill (source: string, variables: Readonly<Record<string, unknown>>, escape: boolean): string {
  return source.replace(PLACEHOLDER, (_m, name: string) => {
    const v = variables[name]
    const s = v === undefined || v === null ? '' : String(v)
    return escape ? escapeHtml(s) : s
  })
}

export function renderTemplate (tpl: TemplateContent, variables: Readonly<Record<string, unknown>> = {}): TemplateContent {
  const out: TemplateContent = { subject: fill(tpl.subject, variables, false).replace(/[\r\n]+/g, ' '), html: fill(tpl.html, variables, true) }
  if (tpl.text !== undefined) out.text = fill(tpl.text, variables, false)
  return out
}
