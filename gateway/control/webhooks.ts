import { ApiError, newId, randomToken, type WebhookRecord } from '../../protocol/mod.ts'
import { webhookUrlProblem } from './webhook_url.ts'

/** The secret is part of the creation answer only; every later read leaves it out. */
export function webhookView (w: WebhookRecord): Record<string, unknown> {
  return { id: w.id, url: w.url, events: w.events, status: w.status, created_at: w.created_at, updated_at: w.updated_at }
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

export function buildWebhook (orgId: string, url: string, events: string[]): WebhookRecord {
  const now = new Date().toISOString()
  return {
    id: newId('wh'),
    org_id: orgId,
    url,
    events: [...new Set(events)],
    secret: newWebhookSecret(),
    status: 'active',
    created_at: now,
    updated_at: now
  }
}
