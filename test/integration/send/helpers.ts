import { jetstreamManager } from '@nats-io/jetstream'
import { STREAM_OUTBOUND, HDR_MSG_ID, newId, type QueuedMessage, type TemplateRecord } from '../../../protocol/mod.ts'
import { suppressionKey } from '../../../stores/control_plane/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { decodeQueued } from '../../../engine/queued_ingress.ts'

export interface StoredMessage { subject: string, seq: number, msgId: string | undefined, msg: QueuedMessage }

/** An Outbox running only the gateway, so nothing consumes the outbound stream while a test reads it. */
export async function startGateway (
  env: Record<string, string> = {}, servers: Parameters<typeof TestOutbox.start>[0] = {}
): Promise<TestOutbox> {
  return await TestOutbox.start({ ...servers, env: { OB_ROLE: 'gateway', ...env } })
}

/** Every message in OB_OUTBOUND, read by sequence (direct get, no consumer). */
export async function outbound (ob: TestOutbox): Promise<StoredMessage[]> {
  const jsm = await jetstreamManager(ob.proc.nc)
  const info = await jsm.streams.info(STREAM_OUTBOUND)
  const out: StoredMessage[] = []
  if (info.state.messages === 0) return out
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(STREAM_OUTBOUND, { seq }).catch(() => null)
    if (m === null) continue
    // Read as the engine reads it: every message the gateway publishes must pass the queued-message schema.
    const msg = decodeQueued(m.data)
    if (typeof msg === 'string') throw new Error(`the gateway published a message the engine refuses: ${msg}`)
    out.push({ subject: m.subject, seq: m.seq, msgId: m.header?.get(HDR_MSG_ID), msg })
  }
  return out
}

/** Stored messages whose id is one of `ids`. */
export async function outboundWithIds (ob: TestOutbox, ids: string[]): Promise<StoredMessage[]> {
  const want = new Set(ids)
  return (await outbound(ob)).filter((m) => want.has(m.msg.id))
}

/** Stored messages sent by this organisation. */
export async function outboundOf (ob: TestOutbox, org: TestOrg): Promise<StoredMessage[]> {
  return (await outbound(ob)).filter((m) => m.msg.org_id === org.orgId)
}

export async function sendKey (ob: TestOutbox, org: TestOrg, environment: 'live' | 'test' = 'live'): Promise<string> {
  return await ob.key(org, ['send'], environment)
}

export function body (org: TestOrg, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { from: `App <hello@${org.domain}>`, to: 'user@example.net', subject: 'Hello', html: '<p>Hi</p>', ...extra }
}

export async function suppress (ob: TestOutbox, org: TestOrg, email: string): Promise<void> {
  await ob.proc.cp.suppressions.put(suppressionKey(org.orgId, email), {
    org_id: org.orgId, email: email.toLowerCase(), reason: 'hard_bounce', created_at: new Date().toISOString()
  })
}

export async function template (ob: TestOutbox, org: TestOrg): Promise<TemplateRecord> {
  const now = new Date().toISOString()
  const t: TemplateRecord = {
    id: newId('tpl'), org_id: org.orgId, name: 'welcome', subject: 'Welcome {{name}}', html: '<p>Hi {{name}}</p>', text: 'Hi {{name}}',
    created_at: now, updated_at: now
  }
  await ob.proc.cp.templates.put(`${org.orgId}.${t.id}`, t)
  return t
}

export async function unverify (ob: TestOutbox, org: TestOrg): Promise<void> {
  const key = `${org.orgId}.${org.domainId}`
  const d = ob.proc.cp.domains.get(key)!
  const { verified_at: _v, ...rest } = d
  await ob.proc.cp.domains.put(key, { ...rest, status: 'pending' })
}
