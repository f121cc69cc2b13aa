import { loadavg } from 'node:os'
import { processCpuUs } from './proc_cpu.ts'
import { sendLoad, type LoadOutcome, type LoadPlan } from './e2e_load.ts'
import { keepBooks, type Books } from './e2e_accounting.ts'
import type { E2eWorld } from './e2e_world.ts'

/**
 * One measured phase of the end-to-end bench: sends at a fixed concurrency (optionally paced to an offered
 * rate) while Outbox delivers them to the sink and posts their `delivered` webhooks, then waits until every
 * accepted message is at the sink and has its webhook (or nothing moved for STALL_MS). CPU time of every process
 * is read from /proc from the first send to that point.
 */
export type Role = keyof ReturnType<E2eWorld['pids']>
export const ROLES: readonly Role[] = ['outbox', 'nats', 'redis', 'sink', 'receiver', 'load_generator']

/** How long the wait for deliveries and webhooks may see no progress before the missing ones count as lost. */
const STALL_MS = 30_000

export interface Phase {
  label: string
  /** Offered sends per second; undefined: as fast as 64 senders get answers. */
  offered?: number
  load: LoadOutcome
  books: Books
  /** Delivered messages per second, first 202 → last first-arrival at the sink. */
  deliveredPerS: number
  /** Signed `delivered` webhooks per second, first 202 → last webhook at the receiver. */
  webhooksPerS: number
  webhooks: number
  /** CPU µs per process over the phase, and the phase's length in seconds (first send → all done). */
  cpuUs: Record<Role, number>
  windowS: number
  loadAverage: { start: string, end: string }
}

const loadAverage = (): string => loadavg().map((l) => l.toFixed(2)).join(' ')
const perS = (n: number, fromMs: number, toMs: number): number => toMs > fromMs ? Math.round(n / ((toMs - fromMs) / 1000)) : 0

/** Waits until the sink holds `sinkTarget` messages and the receiver `hookTarget` webhooks, or nothing moves for STALL_MS. */
async function untilSettled (w: E2eWorld, sinkTarget: number, hookTarget: number): Promise<void> {
  let last = ''
  let movedAt = Date.now()
  for (;;) {
    const [atSink, hooks] = await Promise.all([w.sink.accepted(), w.receiver.count()])
    if (atSink >= sinkTarget && hooks.received >= hookTarget) return
    const now = `${atSink}/${hooks.received}`
    if (now !== last) { last = now; movedAt = Date.now() }
    if (Date.now() - movedAt > STALL_MS) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

export async function runPhase (
  w: E2eWorld, label: string, plan: LoadPlan, body: (i: number, sentAt: number) => string, progress: (f: number) => void
): Promise<Phase> {
  const [sink0, hooks0] = await Promise.all([w.sink.accepted(), w.receiver.count()])
  const pids = w.pids()
  const cpu0 = ROLES.map((r) => processCpuUs(pids[r]))
  const la0 = loadAverage()
  const load = await sendLoad(w.baseUrl, w.key, body, plan, (sent) => { progress(0.8 * sent / plan.count) })
  progress(0.8)
  await untilSettled(w, sink0 + load.accepted.length, hooks0.received + load.accepted.length)
  const endedAt = Date.now()
  const cpuUs = Object.fromEntries(ROLES.map((r, i) => [r, Math.max(0, processCpuUs(pids[r]) - cpu0[i]!)])) as Record<Role, number>
  const la1 = loadAverage()
  const arrivals = await w.sink.arrivals()
  const hooks = await w.receiver.count()
  const report = await w.receiver.report()
  const books = keepBooks(load.accepted, arrivals, report.perMessage, w.domain)
  const delivered = books.accepted - books.lost
  const webhooks = hooks.received - hooks0.received
  return {
    label,
    ...(plan.ratePerS !== undefined ? { offered: plan.ratePerS } : {}),
    load,
    books,
    deliveredPerS: perS(delivered, load.firstAcceptAt, books.lastArrivalAt),
    webhooksPerS: perS(webhooks, load.firstAcceptAt, hooks.lastAt),
    webhooks,
    cpuUs,
    windowS: Math.round((endedAt - load.startedAt) / 100) / 10,
    loadAverage: { start: la0, end: la1 }
  }
}
