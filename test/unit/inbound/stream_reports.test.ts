import { test } from 'node:test'
import assert from 'node:assert/strict'
import { emitReportEvents, type ReportDeps } from '../../../inbound/report_events.ts'
import { unsubscribeByMail } from '../../../inbound/mail_unsubscribe.ts'
import type { ReportSubject } from '../../../inbound/report_checks.ts'
import type { SuppressionRecord } from '../../../protocol/mod.ts'
import type { ControlPlane } from '../../../stores/control_plane/mod.ts'

/**
 * Complaints and mailto unsubscribes about broadcast mail suppress the address on that stream only; about
 * transactional mail, on every stream. The control plane and the publisher are stand-ins that record the calls.
 */
function deps (): { d: ReportDeps, added: Array<{ email: string, reason: string, stream?: string }>, published: any[] } {
  const added: Array<{ email: string, reason: string, stream?: string }> = []
  const published: any[] = []
  const cp = {
    isSuppressed: () => false,
    suppressionLists: {
      add: async (_org: string, email: string, reason: SuppressionRecord['reason'], details: { stream?: string }) => {
        added.push({ email, reason, ...(details.stream !== undefined ? { stream: details.stream } : {}) })
        return await Promise.resolve({ record: {} as SuppressionRecord, created: true })
      }
    }
  } as unknown as ControlPlane
  // every metric at any depth (`bounces.live.hard.mailbox`) counts into nothing
  const metrics: object = new Proxy({}, { get: (_t, k) => k === 'inc' ? () => {} : metrics })
  const js = { publish: async (_s: string, data: Uint8Array) => { published.push(JSON.parse(Buffer.from(data).toString('utf8'))) } }
  const d = { cp, js, log: {} as any, drops: { drop: () => {} } as any, metrics: metrics as any } as unknown as ReportDeps
  return { d, added, published }
}

const subject = (stream?: string): ReportSubject => ({
  orgId: 'org_1', messageId: 'msg_1', recipients: ['a@x.example'], environment: 'live', domain: 'mine.example',
  ...(stream !== undefined ? { stream } : {})
})
const complaint = { kind: 'arf' as const, feedbackType: 'abuse', originalRecipient: 'a@x.example' }

test('a complaint about broadcast mail suppresses its stream only, one about transactional mail every stream', async () => {
  const b = deps()
  await emitReportEvents(b.d, complaint, subject('news'), 'in_1')
  assert.deepEqual(b.added, [{ email: 'a@x.example', reason: 'complaint', stream: 'news' }])
  assert.equal(b.published[0].data.stream, 'news')
  const t = deps()
  await emitReportEvents(t.d, complaint, subject('transactional'), 'in_1')
  assert.deepEqual(t.added, [{ email: 'a@x.example', reason: 'complaint' }])
})

test('a hard bounce report suppresses every stream, whatever the stream of the mail', async () => {
  const b = deps()
  const dsn = {
    kind: 'dsn' as const,
    recipients: [{ addresses: ['a@x.example'], action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 no such user' }]
  }
  await emitReportEvents(b.d, dsn, subject('news'), 'in_1')
  assert.deepEqual(b.added, [{ email: 'a@x.example', reason: 'hard_bounce' }])
  assert.equal(b.published[0].data.stream, 'news')
})

test('a mailto unsubscribe from broadcast mail suppresses its stream only', async () => {
  const b = deps()
  await unsubscribeByMail(b.d, subject('news'))
  assert.deepEqual(b.added, [{ email: 'a@x.example', reason: 'unsubscribe', stream: 'news' }])
  assert.equal(b.published[0].data.stream, 'news')
  const t = deps()
  await unsubscribeByMail(t.d, subject())
  assert.deepEqual(t.added, [{ email: 'a@x.example', reason: 'unsubscribe' }])
})
