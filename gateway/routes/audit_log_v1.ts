import { ApiError, AUDIT_OPERATOR_SCOPE } from '../../protocol/mod.ts'
import type { AuditFilter, AuditLog, AuditPage } from '../../stores/audit/mod.ts'
import { operatorRoute, route } from '../http/route.ts'
import { pageParams, pageSchema, withinBytes, type Page } from '../http/pagination.ts'
import { AuditEntryView, AuditQuery } from '../schemas/audit.ts'
import { errorResponses, operatorErrorResponses } from '../schemas/control.ts'

const TAG = 'Audit log'
const CURSOR = /^[1-9][0-9]{0,15}$/
const DESCRIPTION = 'Every change to the organisation\'s keys, webhooks, domains, inbound routes, templates, suppressions, plan and ' +
  'egress settings, newest first, kept OB_AUDIT_RETENTION_DAYS days (365 by default). A page may hold fewer entries than ' +
  '`limit` while `has_more` is true: a read looks at up to 2000 entries, then gives a cursor to go on. docs/audit-log.md lists ' +
  'the actions.'

type Entry = Awaited<ReturnType<AuditLog['list']>>['data'][number]

/** A page of `scope`'s entries for the query: filters, cursor (an opaque stream sequence) and limit. */
async function auditPage (log: AuditLog, scope: string, query: URLSearchParams, listMaxBytes: number): Promise<Page<Entry>> {
  const { limit, cursor, maxBytes } = pageParams(query, listMaxBytes)
  let before: number | undefined
  if (cursor !== undefined) {
    const seq = Buffer.from(cursor, 'base64url').toString('utf8')
    if (!CURSOR.test(seq)) throw ApiError.validation([{ field: 'cursor', message: 'is not a cursor this API returned' }])
    before = Number(seq)
  }
  const filter: AuditFilter = {}
  for (const f of ['action', 'actor', 'target'] as const) {
    const v = query.get(f)
    if (v !== null && v !== '') filter[f] = v
  }
  const since = query.get('since')
  const until = query.get('until')
  if (since !== null) filter.sinceMs = Date.parse(since)
  if (until !== null) filter.untilMs = Date.parse(until)
  let page: AuditPage
  try {
    page = await log.list(scope, filter, limit, before)
  } catch (err) {
    throw new ApiError('service_unavailable', 'The audit log cannot be read now; try again.', { cause: err, retryAfter: 1 })
  }
  const seqs = new Map<Entry, number>(page.data.map((e, i) => [e, page.seqs[i]!]))
  const cursorOf = (e: Entry): string => Buffer.from(String(seqs.get(e))).toString('base64url')
  const body: Page<Entry> = {
    data: page.data,
    has_more: page.nextBefore !== undefined,
    next_cursor: page.nextBefore !== undefined ? Buffer.from(String(page.nextBefore)).toString('base64url') : null
  }
  return withinBytes(body, maxBytes, cursorOf)
}

const Listed = { description: 'A page of entries, newest first', schema: pageSchema(AuditEntryView) }

export const auditLogRoutes = [
  route({
    method: 'get',
    path: '/v1/audit-log',
    permission: 'manage',
    summary: 'Who changed what in this organisation, newest first',
    description: DESCRIPTION,
    tag: TAG,
    query: AuditQuery,
    responses: {
      200: Listed,
      ...errorResponses({ validation_error: 'Bad limit, cursor or time', forbidden: 'The key lacks manage' })
    },
    handler: async ({ deps, auth, query }) => ({
      status: 200, body: await auditPage(deps.audit, auth.org.id, query, deps.config.api.listMaxBytes)
    })
  }),
  operatorRoute({
    method: 'get',
    path: '/v1/operator/organizations/:id/audit-log',
    idPrefix: 'org',
    permission: 'operator',
    summary: 'The audit log of one organisation, newest first',
    description: 'The entries GET /v1/audit-log shows that organisation, the operator\'s own changes to it included; also after ' +
      'the organisation was deleted.',
    tag: 'Operator',
    query: AuditQuery,
    responses: { 200: Listed, ...operatorErrorResponses({ validation_error: 'Bad limit, cursor or time' }) },
    handler: async ({ deps, params, query }) => ({
      status: 200, body: await auditPage(deps.audit, params.id!, query, deps.config.api.listMaxBytes)
    })
  }),
  operatorRoute({
    method: 'get',
    path: '/v1/operator/audit-log',
    permission: 'operator',
    summary: 'Operator changes of the whole installation (egress sources, pools, limits), newest first',
    tag: 'Operator',
    query: AuditQuery,
    responses: { 200: Listed, ...operatorErrorResponses({ validation_error: 'Bad limit, cursor or time' }) },
    handler: async ({ deps, query }) => ({
      status: 200, body: await auditPage(deps.audit, AUDIT_OPERATOR_SCOPE, query, deps.config.api.listMaxBytes)
    })
  })
]
