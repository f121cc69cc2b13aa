import { Pool } from 'undici'
import { percentile } from './soak_probe.ts'
import type { AcceptedSend } from './e2e_accounting.ts'

/**
 * The end-to-end bench's load generator: `concurrency` senders posting `POST /v1/messages/send` one after
 * another over an undici pool of as many connections, either as fast as answers come (closed loop) or paced to
 * an offered rate (request i is due at start + i / rate; a sender that is late sends at once). Each body is
 * built at its send time, so it can carry that time (X-Bench-Sent). Latency is from the request's send to
 * its answer.
 */
export interface LoadPlan {
  count: number
  concurrency: number
  /** Offered sends per second; undefined: as fast as the senders get answers. */
  ratePerS?: number
}

export interface LoadOutcome {
  accepted: AcceptedSend[]
  /** Answer status → count; 0 stands for a connection error or timeout. */
  statuses: Map<number, number>
  latency: { p50: number, p99: number, max: number }
  startedAt: number
  firstAcceptAt: number
  lastAcceptAt: number
  /** Accepted sends per second, from the first request to the last answer. */
  acceptedPerS: number
}

export async function sendLoad (
  baseUrl: string, key: string, body: (i: number, sentAt: number) => string, plan: LoadPlan, progress: (sent: number) => void = () => {}
): Promise<LoadOutcome> {
  const pool = new Pool(baseUrl, { connections: plan.concurrency, pipelining: 1, keepAliveTimeout: 30_000 })
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const accepted: AcceptedSend[] = []
  const statuses = new Map<number, number>()
  const latencies: number[] = []
  const startedAt = Date.now()
  let firstAcceptAt = 0
  let lastAcceptAt = 0
  let next = 0
  const sender = async (): Promise<void> => {
    while (next < plan.count) {
      const i = next++
      if (plan.ratePerS !== undefined) {
        const wait = startedAt + (i * 1000) / plan.ratePerS - Date.now()
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      }
      const sentAt = Date.now()
      const t0 = performance.now()
      let status = 0
      try {
        const res = await pool.request({
          path: '/v1/messages/send', method: 'POST', headers, body: body(i, sentAt), headersTimeout: 30_000, bodyTimeout: 30_000
        })
        const text = await res.body.text()
        status = res.statusCode
        if (status === 202) {
          const now = Date.now()
          accepted.push({ id: (JSON.parse(text) as { id: string }).id, sentAt })
          if (firstAcceptAt === 0) firstAcceptAt = now
          lastAcceptAt = now
        }
      } catch {
        status = 0
      }
      latencies.push(performance.now() - t0)
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      if ((i & 255) === 0) progress(i)
    }
  }
  try {
    await Promise.all(Array.from({ length: plan.concurrency }, sender))
  } finally {
    await pool.close()
  }
  const round = (ms: number): number => Math.round(ms * 10) / 10
  return {
    accepted,
    statuses,
    latency: {
      p50: round(percentile(latencies, 50)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.reduce((m, v) => Math.max(m, v), 0))
    },
    startedAt,
    firstAcceptAt,
    lastAcceptAt,
    acceptedPerS: Math.round(accepted.length / Math.max(0.001, (Math.max(lastAcceptAt, startedAt + 1) - startedAt) / 1000))
  }
}
