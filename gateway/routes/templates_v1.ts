import { Type } from 'typebox'
import { ApiError } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { ownedRecord } from '../http/access.ts'
import { PageQuery, pageById, pageSchema } from '../http/pagination.ts'
import { applyTemplateFields, newTemplate, templateView, type TemplateFields } from '../control/templates.ts'
import { FORBIDDEN_OTHER_ORG, TemplateView, errorResponses } from '../schemas/control.ts'

// The same rule as a send request's subject: a template's subject is copied into every queued message made from it.
const NoLineBreaks = '^[^\\r\\n\\0]*$'
const Name = Type.String({ minLength: 1, maxLength: 200 })
const Subject = Type.String({
  minLength: 1,
  maxLength: 998,
  pattern: NoLineBreaks,
  errorMessage: 'must not contain CR, LF or NUL',
  description: '{{var}} placeholders are filled as plain text'
})
const Html = Type.String({ minLength: 1, maxLength: 800_000, description: '{{var}} placeholders are filled HTML-escaped' })
const Text = Type.String({ maxLength: 800_000, description: '{{var}} placeholders are filled as plain text' })

const CreateTemplateBody = Type.Object({
  name: Name, subject: Subject, html: Html, text: Type.Optional(Text)
}, { additionalProperties: false })
const PatchTemplateBody = Type.Object({
  name: Type.Optional(Name),
  subject: Type.Optional(Subject),
  html: Type.Optional(Html),
  text: Type.Optional(Type.Union([Text, Type.Null()], { description: 'null removes the plain-text part' }))
}, { additionalProperties: false, minProperties: 1 })

const TAG = 'Templates'
const NOT_FOUND = 'No template with this id'

export const templateRoutes = [
  route<{ name: string, subject: string, html: string, text?: string }>({
    method: 'post',
    path: '/v1/templates',
    audit: { action: 'template.created', fields: ['name'], detail: ({ body }) => ({ fields: Object.keys(body) }) },
    permission: 'manage',
    summary: 'Create a template with {{var}} placeholders',
    tag: TAG,
    body: CreateTemplateBody,
    responses: {
      201: { description: 'The template', schema: TemplateView },
      ...errorResponses({ validation_error: 'Missing or invalid fields, or the template is too large', forbidden: 'The key lacks manage' })
    },
    handler: async ({ deps, auth, body }) => {
      const t = newTemplate(auth.org.id, body)
      await deps.cp.templates.put(`${t.org_id}.${t.id}`, t)
      return { status: 201, body: templateView(t) }
    }
  }),
  route({
    method: 'get',
    path: '/v1/templates',
    permission: 'manage',
    summary: 'List the organisation\'s templates, oldest first',
    tag: TAG,
    query: PageQuery,
    responses: {
      200: { description: 'A page of templates', schema: pageSchema(TemplateView) },
      ...errorResponses({ validation_error: 'Bad limit or cursor', forbidden: 'The key lacks manage' })
    },
    handler: ({ deps, auth, query }) => {
      return { status: 200, body: pageById(deps.cp.templates.list(`${auth.org.id}.`), query, deps.config.api.listMaxBytes, templateView) }
    }
  }),
  route({
    method: 'get',
    path: '/v1/templates/:id',
    idPrefix: 'tpl',
    permission: 'manage',
    summary: 'Read one template',
    tag: TAG,
    responses: {
      200: { description: 'The template', schema: TemplateView },
      ...errorResponses({ forbidden: FORBIDDEN_OTHER_ORG, not_found: NOT_FOUND })
    },
    handler: ({ deps, auth, params }) => ({
      status: 200, body: templateView(ownedRecord(deps.cp.templates, auth.org.id, params.id!, 'template'))
    })
  }),
  route<TemplateFields>({
    method: 'patch',
    path: '/v1/templates/:id',
    audit: { action: 'template.updated', fields: ['name'], detail: ({ body }) => ({ fields: Object.keys(body) }) },
    idPrefix: 'tpl',
    permission: 'manage',
    summary: 'Change some fields of a template',
    tag: TAG,
    body: PatchTemplateBody,
    responses: {
      200: { description: 'The template after the change', schema: TemplateView },
      ...errorResponses({ validation_error: 'Empty body or invalid fields', forbidden: FORBIDDEN_OTHER_ORG, not_found: NOT_FOUND })
    },
    handler: async ({ deps, auth, params, body }) => {
      const t = ownedRecord(deps.cp.templates, auth.org.id, params.id!, 'template')
      const now = new Date().toISOString()
      const updated = await deps.cp.templates.modify(`${t.org_id}.${t.id}`, (cur) => applyTemplateFields(cur, body, now))
      if (updated === undefined) throw new ApiError('not_found', `No template with id ${t.id}.`)
      return { status: 200, body: templateView(updated) }
    }
  }),
  route({
    method: 'del',
    path: '/v1/templates/:id',
    audit: { action: 'template.deleted' },
    idPrefix: 'tpl',
    permission: 'manage',
    summary: 'Delete a template',
    tag: TAG,
    responses: { 204: { description: 'Deleted' }, ...errorResponses({ forbidden: FORBIDDEN_OTHER_ORG, not_found: NOT_FOUND }) },
    handler: async ({ deps, auth, params }) => {
      const t = ownedRecord(deps.cp.templates, auth.org.id, params.id!, 'template')
      await deps.cp.templates.delete(`${t.org_id}.${t.id}`)
      return { status: 204 }
    }
  })
]
