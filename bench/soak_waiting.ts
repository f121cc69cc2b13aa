import { send, sendBody, sinkCounts, sleep } from '../test/integration/faults/fault_env.ts'
import { collectEvents } from './soak_checks.ts'
import type { SoakWorld } from './soak.ts'

/**
 * Mail that waits inside the engine through the soak's faults and its work-queue sweeps: deferrals, whose
 * recipient the sink answers 451 `deferTimes` times so the retry schedule's steps pass for real (one domain per
 * message, so no destination gets suspended), and sends scheduled a minute or more ahead. Each must reach the
 * sink exactly once, a scheduled one not before its time, and end `delivered`.
 */
export interface WaitingPlan {
  /** Pause between two waiting sends (they alternate deferred and scheduled). */
  everyMs: number
  /** 451s before the sink accepts a deferred recipient (below the destination backoff's five). */
  deferTimes: number
  /** Range of seconds ahead of a scheduled send; none is due after `lastDueMs`. */
  aheadS: readonly [number, number]
  lastDueMs: number
}

/** `acceptedMs`: when its 202 came (a send refused during a fault is retried with its key until then). */
export interface WaitingSent { id: string, kind: 'deferred' | 'scheduled', dueMs: number, acceptedMs: number }

/** A waiting message that ended wrong, with times in seconds since the load started, to set against the faults. */
export interface WaitingWrong { id: string, kind: string, accepted_s: number, due_s: number, at_sink: number, status: string }

export interface WaitingChecks {
  deferred: number
  scheduled: number
  lost: number
  duplicated: number
  early: number
  notDelivered: number
  wrong: WaitingWrong[]
}

/** A scheduled_at less than this far ahead would read as "send now" (60 s of clock skew, plus a margin). */
const MIN_AHEAD_S = 65

export function startWaitingMail (
  w: SoakWorld, plan: WaitingPlan, accepted: (id: string) => void
): { sent: WaitingSent[], stop: () => Promise<void> } {
  const org = { orgId: w.orgId, domainId: '', domain: w.domain, adminKey: w.key }
  const sent: WaitingSent[] = []
  let running = true
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const deferred = i % 2 === 0
      const ahead = Math.min(plan.aheadS[0] + Math.random() * (plan.aheadS[1] - plan.aheadS[0]), (plan.lastDueMs - Date.now()) / 1000)
      if (deferred || ahead >= MIN_AHEAD_S) {
        const due = deferred ? Date.now() : Date.now() + ahead * 1000
        const body = deferred
          ? sendBody(org, `tempfail${plan.deferTimes}times-w${i}@w${i}.deferred.example`)
          : sendBody(org, `w${i}@scheduled.example`, { scheduled_at: new Date(due).toISOString() })
        // retried with one Idempotency-Key until answered, as the soak's other senders do
        for (let attempt = 0; running || attempt === 0; attempt++) {
          const r = await send(w.baseUrl, w.key, body, { 'idempotency-key': `soak-waiting-${i}` })
          if (r.status === 202) {
            sent.push({ id: r.id!, kind: deferred ? 'deferred' : 'scheduled', dueMs: due, acceptedMs: Date.now() })
            accepted(r.id!)
            break
          }
          await sleep(Math.min(1000, Number(r.retryAfter ?? 1) * 1000))
        }
      }
      await sleep(plan.everyMs)
    }
  })()
  return { sent, async stop () { running = false; await loop } }
}

/** After the drain: each waiting message at the sink once, not before its scheduled_at, and `delivered`. */
export async function checkWaitingMail (w: SoakWorld, sent: readonly WaitingSent[], soakStart: number): Promise<WaitingChecks> {
  const counts = sinkCounts(w.sink)
  const at = (id: string): number => counts.get(`<${id}@${w.domain}>`) ?? 0
  const deliveredAt = new Map<string, number>()
  for (const { record: e } of await collectEvents(w.nats.url, w.orgId)) {
    if (e.type === 'delivered' && e.message_id !== undefined) deliveredAt.set(e.message_id, Date.parse(String(e.data.delivered_at)))
  }
  let notDelivered = 0
  const wrong: WaitingWrong[] = []
  const sinceStart = (ms: number): number => Math.round((ms - soakStart) / 1000)
  for (const s of sent) {
    const res = await fetch(`${w.baseUrl}/v1/messages/${s.id}`, { headers: { authorization: `Bearer ${w.key}` } }).catch(() => undefined)
    const m = res?.status === 200 ? await res.json() as { status?: string } : undefined
    if (m?.status !== 'delivered') notDelivered++
    const early = s.kind === 'scheduled' && (deliveredAt.get(s.id) ?? Infinity) < s.dueMs - 250
    if (m?.status !== 'delivered' || at(s.id) !== 1 || early) {
      wrong.push({
        id: s.id,
        kind: s.kind,
        accepted_s: sinceStart(s.acceptedMs),
        due_s: sinceStart(s.dueMs),
        at_sink: at(s.id),
        status: m?.status ?? `HTTP ${res?.status ?? 'error'}`
      })
    }
  }
  return {
    deferred: sent.filter((s) => s.kind === 'deferred').length,
    scheduled: sent.filter((s) => s.kind === 'scheduled').length,
    lost: sent.filter((s) => at(s.id) === 0).length,
    duplicated: sent.filter((s) => at(s.id) > 1).length,
    early: sent.filter((s) => s.kind === 'scheduled' && (deliveredAt.get(s.id) ?? Infinity) < s.dueMs - 250).length,
    notDelivered,
    wrong
  }
}
