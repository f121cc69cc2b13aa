import { test } from 'node:test'
import assert from 'node:assert/strict'
import { pino } from 'pino'
import { DmarcIntake, DMARC_IN_FLIGHT } from '../../../inbound/dmarc_intake.ts'
import type { AnalysisPool } from '../../../inbound/analysis_pool.ts'
import type { InboundJob } from '../../../protocol/mod.ts'
import type { ControlPlane } from '../../../stores/control_plane/mod.ts'
import type { DmarcSummaries } from '../../../stores/dmarc/mod.ts'
import { OutboxMetrics } from '../../../stores/metrics/mod.ts'
import { SmtpReply } from '../../../stores/smtp_server/mod.ts'
import type { DomainRecord } from '../../../protocol/mod.ts'

const domain = { id: 'dom_a', org_id: 'org_a', name: 'example.test', status: 'verified' } as DomainRecord
const job: InboundJob = { id: 'msg_a', received_at: '', mail_from: '', rcpt_to: [], remote_ip: '127.0.0.1', helo: '', size: 0 }

function intake (summaries: Partial<DmarcSummaries>, metrics = new OutboxMetrics()): DmarcIntake {
  // an analysis that never ends: every report taken stays in flight
  const analysis = { analyze: () => new Promise(() => {}) } as unknown as AnalysisPool
  return new DmarcIntake({
    cp: {} as ControlPlane, analysis, summaries: summaries as DmarcSummaries, metrics, log: pino({ level: 'silent' })
  })
}

test('past 8 reports being read at once, the next is answered 451 4.3.2 and counted as busy', async () => {
  const metrics = new OutboxMetrics()
  const i = intake({}, metrics)
  assert.equal(DMARC_IN_FLIGHT, 8)
  for (let n = 0; n < DMARC_IN_FLIGHT; n++) void i.take(Buffer.from('x'), domain, job)
  const text = '4.3.2 Too many DMARC reports being read at once, try again later'
  await assert.rejects(i.take(Buffer.from('x'), domain, job), (err: SmtpReply) =>
    err instanceof SmtpReply && err.responseCode === 451 && err.message === text)
  assert.match(await metrics.render(), /^outbox_dmarc_reports_total\{result="busy"\} 1$/m)
})

test('a domain that took 200 reports today is refused at RCPT TO; Redis failing lets the report through', async () => {
  const full = await intake({ takenToday: async () => 200 }).admit(domain)
  assert.equal(full?.responseCode, 550)
  assert.equal(full?.message, '5.7.1 dmarc@bounces.example.test has taken all the DMARC reports it takes today (200)')
  assert.equal(await intake({ takenToday: async () => 199 }).admit(domain), undefined)
  assert.equal(await intake({ takenToday: async () => { throw new Error('down') } }).admit(domain), undefined)
})
