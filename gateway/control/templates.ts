import { ApiError, newId, templateVariables, type TemplateRecord } from '../../protocol/mod.ts'

/** NATS rejects messages over its max_payload (1 MB by default); stay clearly below it. */
export const MAX_TEMPLATE_BYTES = 900_000

export function templateView (t: TemplateRecord): Record<string, unknown> {
  const v: Record<string, unknown> = { id: t.id, name: t.name, subject: t.subject, html: t.html }
  if (t.text !== undefined) v.text = t.text
  v.variables = templateVariables(t)
  v.created_at = t.created_at
  v.updated_at = t.updated_at
  return v
}

export interface TemplateFields { name?: string, subject?: string, html?: string, text?: string | null }

/** Applies the given fields; `text: null` removes the plain-text part. */
export function applyTemplateFields (base: TemplateRecord, fields: TemplateFields, nowIso: string): TemplateRecord {
  const next: TemplateRecord = { ...base, updated_at: nowIso }
  if (fields.name !== undefined) next.name = fields.name
  if (fields.subject !== undefined) next.subject = fields.subject
  if (fields.html !== undefined) next.html = fields.html
  if (fields.text === null) delete next.text
  else if (fields.text !== undefined) next.text = fields.text
  assertTemplateSize(next)
  return next
}

export function newTemplate (orgId: string, fields: { name: string, subject: string, html: string, text?: string }): TemplateRecord {
  const now = new Date().toISOString()
  const blank = { id: newId('tpl'), org_id: orgId, name: '', subject: '', html: '', created_at: now, updated_at: now }
  return applyTemplateFields(blank, fields, now)
}

function assertTemplateSize (t: TemplateRecord): void {
  const bytes = Buffer.byteLength(JSON.stringify(t))
  if (bytes > MAX_TEMPLATE_BYTES) {
    throw ApiError.validation([
      { field: 'html', message: `the template is ${bytes} bytes stored; at most ${MAX_TEMPLATE_BYTES} are allowed` }
    ])
  }
}
