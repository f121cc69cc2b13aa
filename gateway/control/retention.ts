import { ApiError, EVENTS_MAX_AGE_MS, type OrgRecord } from '../../protocol/mod.ts'
import type { ControlPlane } from '../../stores/control_plane/mod.ts'

const DAY_MS = 24 * 3600_000
/** The installation's maximum for messages and events: the event stream's 30 days, which the read model never outlives. */
export const MAX_MESSAGE_RETENTION_DAYS = EVENTS_MAX_AGE_MS / DAY_MS

/** An organisation's retention as the API shows it: each setting in force, and the installation's maximum. */
export interface RetentionView {
  messages_days: number
  events_days: number
  content_days: number
  maximum: { messages_days: number, events_days: number, content_days: number }
}

export function retentionView (org: OrgRecord, contentMaxDays: number): RetentionView {
  const r = org.retention ?? {}
  return {
    messages_days: Math.min(r.messages_days ?? MAX_MESSAGE_RETENTION_DAYS, MAX_MESSAGE_RETENTION_DAYS),
    events_days: Math.min(r.events_days ?? MAX_MESSAGE_RETENTION_DAYS, MAX_MESSAGE_RETENTION_DAYS),
    content_days: Math.min(r.content_days ?? contentMaxDays, contentMaxDays),
    maximum: { messages_days: MAX_MESSAGE_RETENTION_DAYS, events_days: MAX_MESSAGE_RETENTION_DAYS, content_days: contentMaxDays }
  }
}

export type RetentionChange = Partial<Record<'messages_days' | 'events_days' | 'content_days', number | null>>

/** Checks each value against the installation's maximum (a 400 naming every field over it), then stores the change. */
export async function setRetention (cp: ControlPlane, orgId: string, change: RetentionChange, contentMaxDays: number): Promise<OrgRecord> {
  const max = { messages_days: MAX_MESSAGE_RETENTION_DAYS, events_days: MAX_MESSAGE_RETENTION_DAYS, content_days: contentMaxDays }
  const errors: Array<{ field: string, message: string }> = []
  for (const k of ['messages_days', 'events_days', 'content_days'] as const) {
    const v = change[k]
    if (v !== undefined && v !== null && v > max[k]) {
      errors.push({ field: k, message: `must be at most ${max[k]} (the installation's maximum)` })
    }
  }
  if (errors.length > 0) throw ApiError.validation(errors)
  return await cp.organizations.setRetention(orgId, change)
}
