import { createTransport, type Transporter } from 'nodemailer'
import type { TestOutbox, TestOrg } from './outbox.ts'
import { newId, type RouteRecord } from '../../protocol/mod.ts'

/** A nodemailer client for the test Outbox's inbound port: plain SMTP, no pooling, no TLS. */
export function inboundClient (ob: TestOutbox): Transporter {
  return createTransport({ host: '127.0.0.1', port: ob.proc.inbound!.port, secure: false, ignoreTLS: true, pool: false })
}

/** Writes a route straight to the control plane, as the routes API does. */
export async function addRoute (ob: TestOutbox, org: TestOrg, match: string, includeAttachments: boolean): Promise<RouteRecord> {
  const r: RouteRecord = {
    id: newId('rt'),
    org_id: org.orgId,
    match,
    action: { type: 'webhook', include_attachments: includeAttachments },
    created_at: new Date().toISOString()
  }
  await ob.proc.cp.routes.put(`${org.orgId}.${r.id}`, r)
  return r
}

/** The SMTP reply code of a rejected send (nodemailer puts it on the error). */
export async function rejectedCode (p: Promise<unknown>): Promise<number> {
  try {
    await p
  } catch (err) {
    return (err as { responseCode?: number }).responseCode ?? -1
  }
  return 250
}
