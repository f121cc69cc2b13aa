import { send, sendBody, sinkCounts, sleep } from '../test/integration/faults/fault_env.ts'
import { collectEvents } from './soak_checks.ts'
import type { SoakWorld } from './soak.ts'

/**
 * Mail that waits inside the engine through the soak's faults and its work-queue sweeps: deferrals, whose
 * recipient the sink answers 451 `deferTimes` times so the retry schedule's steps pass for real (one domain per
 * message, so no destination gets suspended), sends scheduled a minute or more ahead, and sends scheduled as far
 * ahead and canceled at once (the cancel retried through the faults until it is answered). Each deferred or
 * scheduled message must reach the sink exactly once, a scheduled one not before its time, and end `delivered`;
 * a canceled one must never reach it and end `canceled`.
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
export interface WaitingSent { id: string, kind: 'deferred' | 'scheduled' | 'canceled', dueMs: number, acceptedMs: number }

/** A waiting message that ended wrong, with times in seconds since the load started, to set against the faults. */
export interface WaitingWrong { id: string, kind: string, accepted_s: number, due_s: number, at_sink: number, status: string }

export interface WaitingChecks {
  deferred: number
  scheduled: number
  canceled: number
  /** Canceled (the cancel answered 200) and yet at the sink, or not `canceled` in the record. */
  canceledSent: number
  canceledWrongStatus: number
  /** Cancels answered 409: the message was already on its way (none expected a minute ahead). */
  cancelRefused: number
  lost: number
  duplicated: number
  /** Message-IDs of the ones delivered twice, to hold against the engine-kill bound (soak_duplicates.ts). */
  duplicatedIds: string[]
  early: number
  notDelivered: number
  wrong: WaitingWrong[]
}

/** A scheduled_at less than this far ahead would read as "send now" (60 s of clock skew, plus a margin). */
const MIN_AHEAD_S = 65
/** A cancel answered 404 is retried this long: the read model may not have the message yet. */
const CANCEL_NOT_FOUND_MS = 60_000
/** After the last canceled message's time, how long the check waits for one sent against its cancel to arrive. */
const CANCELED_GRACE_MS = 20_000

export function startWaitingMail (
  w: SoakWorld, plan: WaitingPlan, accepted: (id: string) => void
): { sent: WaitingSent[], cancelRefused: () => number, stop: () => Promise<void> } {
  const org = { orgId: w.orgId, domainId: '', domain: w.domain, adminKey: w.key }
  const sent: WaitingSent[] = []
  let cancelRefused = 0
  let running = true
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const deferred = i % 3 === 0
      const canceled = i % 3 === 2
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
            const kind = deferred ? 'deferred' : canceled ? 'canceled' : 'scheduled'
            if (kind !== 'canceled') accepted(r.id!)
            else if (!await cancel(w, r.id!)) { cancelRefused++; break }
            sent.push({ id: r.id!, kind, dueMs: due, acceptedMs: Date.now() })
            break
          }
          await sleep(Math.min(1000, Number(r.retryAfter ?? 1) * 1000))
        }
      }
      await sleep(plan.everyMs)
    }
  })()
  return { sent, cancelRefused: () => cancelRefused, async stop () { running = false; await loop } }
}

/**
 * Cancels a scheduled message as a user's retrying client does: 503s and connection errors are retried, a 404 for
 * a minute (the record may lag the 202). True once answered 200; false on a 409 (already on its way).
 */
async function cancel (w: SoakWorld, id: string): Promise<boolean> {
  const notFoundUntil = Date.now() + CANCEL_NOT_FOUND_MS
  for (;;) {
    const res = await fetch(`${w.baseUrl}/v1/messages/${id}/cancel`, {
      method: 'POST', headers: { authorization: `Bearer ${w.key}` }, signal: AbortSignal.timeout(15_000)
    }).catch(() => undefined)
    await res?.text().catch(() => '')
    if (res?.status === 200) return true
    if (res?.status === 409 || (res?.status === 404 && Date.now() > notFoundUntil)) return false
    await sleep(500)
  }
}

/** After the drain: each waiting message at the sink once, not before its scheduled_at, and `delivered`. */
export async function checkWaitingMail (
  w: SoakWorld, all: readonly WaitingSent[], cancelRefused: number, soakStart: number
): Promise<WaitingChecks> {
  // The drain waits for accepted mail only: a canceled message sent against its cancel would show after its time.
  const lastCanceledDue = Math.max(0, ...all.filter((x) => x.kind === 'canceled').map((x) => x.dueMs))
  await sleep(Math.max(0, lastCanceledDue + CANCELED_GRACE_MS - Date.now()))
  const counts = sinkCounts(w.sink)
  const at = (id: string): number => counts.get(`<${id}@${w.domain}>`) ?? 0
  const deliveredAt = new Map<string, number>()
  for (const { record: e } of await collectEvents(w.nats.url, w.orgId)) {
    if (e.type === 'delivered' && e.message_id !== undefined) deliveredAt.set(e.message_id, Date.parse(String(e.data.delivered_at)))
  }
  let notDelivered = 0
  let canceledSent = 0
  let canceledWrongStatus = 0
  const wrong: WaitingWrong[] = []
  const sinceStart = (ms: number): number => Math.round((ms - soakStart) / 1000)
  const statusOf = async (id: string): Promise<{ res?: Response, status?: string }> => {
    const res = await fetch(`${w.baseUrl}/v1/messages/${id}`, { headers: { authorization: `Bearer ${w.key}` } }).catch(() => undefined)
    return { res, status: res?.status === 200 ? (await res.json() as { status?: string }).status : undefined }
  }
  const sent = all.filter((s) => s.kind !== 'canceled')
  for (const s of all.filter((x) => x.kind === 'canceled')) {
    const { res, status } = await statusOf(s.id)
    if (at(s.id) > 0) canceledSent++
    if (status !== 'canceled') canceledWrongStatus++
    if (at(s.id) > 0 || status !== 'canceled') {
      const shown = status ?? `HTTP ${res?.status ?? 'error'}`
      const times = { accepted_s: sinceStart(s.acceptedMs), due_s: sinceStart(s.dueMs) }
      wrong.push({ id: s.id, kind: s.kind, ...times, at_sink: at(s.id), status: shown })
    }
  }
  for (const s of sent) {
    const { res, status } = await statusOf(s.id)
    const m = status === undefined ? undefined : { status }
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
    canceled: all.length - sent.length,
    canceledSent,
    canceledWrongStatus,
    cancelRefused,
    lost: sent.filter((s) => at(s.id) === 0).length,
    duplicated: sent.filter((s) => at(s.id) > 1).length,
    duplicatedIds: sent.filter((s) => at(s.id) > 1).map((s) => `<${s.id}@${w.domain}>`),
    early: sent.filter((s) => s.kind === 'scheduled' && (deliveredAt.get(s.id) ?? Infinity) < s.dueMs - 250).length,
    notDelivered,
    wrong
  }
}
