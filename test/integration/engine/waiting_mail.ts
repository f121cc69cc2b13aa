import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { TestOutbox } from '../../helpers/outbox.ts'
import { messageIdHeader, send, sendBody, sinkCounts, sleep, untilNothingPending, nothingPending } from '../faults/fault_env.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * Mail that waits inside the engine (deferred after a 451, or scheduled) while ordinary mail flows through
 * every shard and work-queue sweeps run between: light ones on OB_ENGINE_SWEEP_MS and forced light and full
 * ones. Every message must be delivered exactly once and end `delivered`, and at the end nothing is stored
 * or owed. The scenario of sweeps_keep_waiting_mail.test.ts and its long form.
 */
export interface WaitingMailPlan {
  /** OB_DELIVERY_RETRY_SCHEDULE; the deferred recipients get a 451 at each attempt but the last of it. */
  retryScheduleS: readonly number[]
  /** Recipients that are deferred that way. */
  deferred: number
  /** Seconds ahead of each scheduled send (more than the 60 s that read as "now"). */
  scheduledAheadS: readonly number[]
  /** Pause between ordinary sends, which go on until every waiting message went out. */
  ordinaryEveryMs: number
  /** Pause between forced sweeps; they alternate light and full. */
  forcedSweepEveryMs: number
}

interface Sent { id: string, to: string, kind: 'ordinary' | 'deferred' | 'scheduled', dueMs: number }

export async function runWaitingMail (t: TestContext, plan: WaitingMailPlan): Promise<void> {
  const sink = await SmtpSink.start({ keepRaw: false, tempfailTimes: plan.retryScheduleS.length })
  const ob = await TestOutbox.start({
    env: { OB_SMTP_RELAY: sink.url, OB_DELIVERY_RETRY_SCHEDULE: plan.retryScheduleS.join(','), OB_ENGINE_SWEEP_MS: '1000' }
  })
  try {
    const org = await ob.org()
    const key = await ob.key(org, ['send', 'read'])
    const sent: Sent[] = []
    let n = 0
    const sendOne = async (kind: Sent['kind'], extra: Record<string, unknown> = {}, dueMs = Date.now()): Promise<void> => {
      const to = `${kind === 'deferred' ? 'tempfail' : kind}${n++}@dest.example`
      const r = await send(ob.baseUrl, key, sendBody(org, to, extra))
      assert.equal(r.status, 202, r.error)
      sent.push({ id: r.id!, to, kind, dueMs })
    }

    let waiting = true
    const ordinary = (async () => {
      while (waiting) {
        await sendOne('ordinary')
        await sleep(plan.ordinaryEveryMs)
      }
    })()
    let sweeps = 0
    const forced = (async () => {
      while (waiting) {
        await sleep(plan.forcedSweepEveryMs)
        await ob.proc.engine!.sweep(sweeps++ % 2 === 1)
      }
    })()
    // waiting mail is sent among the ordinary mail, so its stream sequences sit between other shards' messages
    const started = Date.now()
    for (const s of plan.scheduledAheadS) {
      await sleep(300)
      const due = Date.now() + s * 1000
      await sendOne('scheduled', { scheduled_at: new Date(due).toISOString() }, due)
    }
    for (let i = 0; i < plan.deferred; i++) {
      await sleep(300)
      await sendOne('deferred', {}, Date.now() + plan.retryScheduleS.reduce((a, b) => a + b, 0) * 1000)
    }
    const lastDue = Math.max(...sent.map((s) => s.dueMs))
    const missing = (): Sent[] => { const c = sinkCounts(sink); return sent.filter((s) => !c.has(messageIdHeader(org, s.id))) }
    // a waiting message the engine dropped never arrives: give each its due time and a minute more
    await sink.until(() => Date.now() > lastDue && missing().length === 0, lastDue - Date.now() + 60_000).catch(() => {})
    waiting = false
    await Promise.all([ordinary, forced])
    t.diagnostic(`${sent.length} sent over ${Math.round((Date.now() - started) / 1000)} s, ${sweeps} forced sweeps`)
    assert.deepEqual(missing().map((s) => `${s.kind} ${s.to}`), [], 'every message reached the sink')
    // the ordinary mail sent last, after lastDue, may still be on its way
    await sink.until(() => missing().length === 0, 30_000)

    const counts = sinkCounts(sink)
    for (const s of sent) assert.equal(counts.get(messageIdHeader(org, s.id)), 1, `${s.kind} ${s.to} delivered once`)
    for (const s of sent.filter((x) => x.kind === 'deferred')) {
      assert.deepEqual(sink.rcptLog.filter((l) => l.startsWith(`${s.to} `)),
        [...plan.retryScheduleS.map(() => `${s.to} 451`), `${s.to} 250`])
    }
    for (const s of sent) {
      let m: { status?: string, events?: Array<{ type: string, data: Record<string, unknown> }> } = {}
      await eventually(async () => (m = (await ob.request('GET', `/v1/messages/${s.id}`, { key })).body ?? {}).status === 'delivered',
        `${s.kind} ${s.to} delivered in the read model`, 10_000, 100)
      assert.equal(m.status, 'delivered', `${s.kind} ${s.to} ends delivered`)
      const delivered = (m.events ?? []).filter((e) => e.type === 'delivered')
      assert.equal(delivered.length, 1, `${s.kind} ${s.to}: one delivered event`)
      if (s.kind === 'scheduled') {
        assert.ok(Date.parse(String(delivered[0]!.data.delivered_at)) >= s.dueMs - 250, `${s.to} not before its scheduled_at`)
      }
    }
    const state = await untilNothingPending(ob.nats.url, 20_000)
    assert.ok(nothingPending(state), JSON.stringify(state))
  } finally {
    await ob.close()
    await sink.close()
  }
}
