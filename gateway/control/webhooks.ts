import {
  ApiError, newId, normalizedFilters, notOrgStreamMessage, randomToken, type WebhookFilters, type WebhookRecord
} from '../../protocol/mod.ts'
import type { ControlPlane } from '../../stores/control_plane/mod.ts'
import { webhookUrlProblem } from './webhook_url.ts'

/** The secret is part of the creation answer only; every later read leaves it out. `filters` is `{}` when none is set. */
export function webhookView (w: WebhookRecord): Record<string, unknown> {
  return {
    id: w.id, url: w.url, events: w.events, filters: w.filters ?? {}, status: w.status, created_at: w.created_at, updated_at: w.updated_at
  }
}

/**
 * The filters as stored (webhook_filters.ts), after checking that every domain named is one of the organisation's
 * own (any status), and every stream one of its streams: a 400 naming each other domain, else a 422
 * `stream_not_found` naming each other stream (the answer of every read filtering by a stream), whether no
 * organisation has it or another one does, so the answer tells nothing about other organisations. A webhook is about
 * events to come, so a deleted stream is refused like any other. The organisation's domains are read once, from the
 * control plane's view.
 */
export function checkedWebhookFilters (cp: ControlPlane, orgId: string, filters: WebhookFilters | undefined): WebhookFilters | undefined {
  const normalized = normalizedFilters(filters)
  if (normalized?.domains !== undefined) {
    const own = new Set(cp.domains.list(`${orgId}.`).map((d) => d.name.toLowerCase()))
    const problems = normalized.domains.flatMap((name, i) => own.has(name)
      ? []
      : [{ field: `filters.domains[${i}]`, message: `${name} is not a domain of this organisation` }])
    if (problems.length > 0) throw ApiError.validation(problems)
  }
  const streamProblems = (normalized?.streams ?? []).flatMap((id, i) => cp.streams.exists(orgId, id)
    ? []
    : [{ field: `filters.streams[${i}]`, message: notOrgStreamMessage(id) }])
  const first = streamProblems[0]
  if (first !== undefined) throw new ApiError('stream_not_found', first.message, { field: first.field, errors: streamProblems })
  return normalized
}

/** Signing secrets: `whsec_` + 32 base62 characters (about 190 bits). */
export function newWebhookSecret (): string {
  return `whsec_${randomToken(32)}`
}

/** 400 naming `url` when it is not an acceptable target (see webhook_url.ts). */
export function assertWebhookUrl (url: string, allowPrivate: boolean): void {
  const problem = webhookUrlProblem(url, { allowPrivate })
  if (problem !== undefined) throw ApiError.validation([{ field: 'url', message: problem }])
}

export function buildWebhook (orgId: string, url: string, events: string[], filters?: WebhookFilters): WebhookRecord {
  const now = new Date().toISOString()
  return {
    id: newId('wh'),
    org_id: orgId,
    url,
    events: [...new Set(events)],
    secret: newWebhookSecret(),
    status: 'active',
    created_at: now,
    updated_at: now,
    ...(filters !== undefined ? { filters } : {})
  }
}
