import autocannon from 'autocannon'
import { connect } from '@nats-io/transport-node'
import { fetch } from 'undici'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { ensureStreams } from '../stores/clients/mod.ts'
import { PLAN_RATE_LIMITS, streamSettings } from '../protocol/mod.ts'
import { loadConfig } from '../config/mod.ts'
import { createOrganization, buildApiKey } from '../gateway/control/orgs.ts'
import { ROUTES } from '../gateway/routes/mod.ts'
import { spawnCli } from '../test/helpers/cli.ts'
import { freePort } from '../test/helpers/ports.ts'
import { judgeKey, weightedSchedule, expectedAllowed, type KeyTally, type KeyJudgement } from './ratelimit_stats.ts'
import type { BenchOptions, BenchResult, Chart, Table } from './types.ts'

type Plan = keyof typeof PLAN_RATE_LIMITS
const PLANS: Plan[] = ['free', 'starter', 'pro']
const FULL = { keys: { free: 120, starter: 60, pro: 20 }, durationS: 75, connections: 48 }
const QUICK = { keys: { free: 4, starter: 3, pro: 3 }, durationS: 8, connections: 16 }
const GATEWAYS = 2

/** `--path`: an authenticated, metered GET without path parameters; /v1/billing unless the build lacks it. */
export function choosePath (requested: string | undefined): { path: string, note?: string } {
  const candidates = ROUTES.filter((r) => r.method === 'get' && r.permission !== null && r.unmetered !== true && !r.path.includes(':'))
  const wanted = requested ?? '/v1/billing'
  if (candidates.some((r) => r.path === wanted)) return { path: wanted }
  if (requested !== undefined) throw new Error(`${requested} is not an authenticated, rate-limited GET route of this build`)
  const fallback = candidates.find((r) => r.path === '/v1/whoami') ?? candidates[0]
  if (fallback === undefined) throw new Error('this build has no authenticated GET route to drive')
  return {
    path: fallback.path,
    note: `GET /v1/billing is not served by this build; GET ${fallback.path} was driven instead (pass --path= to choose).`
  }
}

interface BenchKey { value: string, tally: KeyTally }

/** autocannon hands headers over with the server's spelling. */
function header (headers: Record<string, string>, lowerName: string): string | undefined {
  for (const k in headers) if (k.toLowerCase() === lowerName) return headers[k]
  return undefined
}

async function createKeys (opts: BenchOptions, counts: Record<Plan, number>): Promise<{ keys: BenchKey[], sentinels: string[] }> {
  const config = loadConfig({ NATS_URL: opts.natsUrl, REDIS_URL: opts.redisUrl })
  const nc = await connect({ servers: opts.natsUrl })
  await ensureStreams(nc, streamSettings(config))
  const cp = await ControlPlane.open(nc, { replicas: 1 })
  const keys: BenchKey[] = []
  const sentinels: string[] = []
  const run = Date.now().toString(36)
  for (const plan of PLANS) {
    const org = await createOrganization(cp, config, { name: `bench ${plan}`, domain: `${plan}-${run}.bench.test`, plan })
    for (let i = 0; i < counts[plan]; i++) {
      const k = buildApiKey({
        orgId: org.organization_id, domainId: org.domain_id, name: `bench ${plan} ${i}`, permissions: ['admin'], environment: 'live'
      })
      await cp.apiKeys.put(k.record.id, k.record)
      const tally: KeyTally = {
        plan, limit: PLAN_RATE_LIMITS[plan], sent: 0, allowed: 0, limited: 0, badRetry: 0, badLimitHeader: 0, other: 0,
        firstAt: 0, lastAt: 0
      }
      keys.push({ value: k.value, tally })
    }
    // Written last: once a gateway accepts it, its mirror holds every key of this organisation.
    const sentinel = buildApiKey({
      orgId: org.organization_id, domainId: org.domain_id, name: 'bench sentinel', permissions: ['admin'], environment: 'live'
    })
    await cp.apiKeys.put(sentinel.record.id, sentinel.record)
    sentinels.push(sentinel.value)
  }
  cp.close()
  await nc.drain()
  return { keys, sentinels }
}

async function waitUntil (what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check().catch(() => false)) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

function planRows (keys: BenchKey[], judged: KeyJudgement[]): Table {
  const rows = PLANS.map((plan) => {
    const idx = keys.map((k, i) => [k, i] as const).filter(([k]) => k.tally.plan === plan).map(([, i]) => i)
    const j = idx.map((i) => judged[i]!)
    const t = idx.map((i) => keys[i]!.tally)
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
    return [
      plan, PLAN_RATE_LIMITS[plan], idx.length,
      Math.round(mean(t.map((x) => x.sent))), Math.round(mean(t.map((x) => x.allowed))), Math.round(mean(j.map((x) => x.expected))),
      Math.round(mean(j.map((x) => x.steadyPerMinute))),
      `${(Math.min(...j.map((x) => x.ratio)) * 100).toFixed(1)} %`, `${(Math.max(...j.map((x) => x.ratio)) * 100).toFixed(1)} %`,
      `${mean(j.map((x) => x.offeredRatio)).toFixed(1)}×`, t.reduce((a, x) => a + x.limited, 0)
    ]
  })
  return {
    title: 'Allowed requests per key (expected = limit + limit × seconds / 60)',
    columns: [
      'plan', 'limit/min', 'keys', 'sent/key', 'allowed/key', 'expected/key', 'steady allowed/key/min', 'min allowed/expected',
      'max allowed/expected', 'offered/expected', '429s'
    ],
    rows
  }
}

/**
 * Two gateway processes share one Redis and NATS; ≥ 200 keys on the free, starter and pro plans are each
 * driven well above their limit through both gateways. Passes when every key got its plan's allowance
 * within ±2 % (no key over its plan, none starved) and every 429 carried `retry_after` and `Retry-After`.
 */
export async function runRatelimitBench (opts: BenchOptions): Promise<BenchResult> {
  const shape = opts.quick ? QUICK : FULL
  const { path, note } = choosePath(opts.args.path)
  opts.progress(0, 'creating keys')
  const { keys, sentinels } = await createKeys(opts, shape.keys)
  opts.progress(0.02, 'starting gateways')
  const ports = await Promise.all(Array.from({ length: GATEWAYS }, async () => await freePort()))
  const gateways = ports.map((port) => spawnCli(['start'], {
    NATS_URL: opts.natsUrl,
    REDIS_URL: opts.redisUrl,
    OB_ROLE: 'gateway',
    OB_HTTP_PORT: String(port),
    OB_SMTP_SUBMISSION_PORT: '0',
    OB_LOG_LEVEL: 'warn',
    OB_SHUTDOWN_TIMEOUT_MS: '2000'
  }))
  const failures: string[] = []
  const notes: string[] = note === undefined ? [] : [note]
  let stopped = false
  const stopGateways = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    for (const g of gateways) g.child.kill('SIGTERM')
    const exits = await Promise.all(gateways.map(async (g) => await g.done))
    for (const e of exits) {
      if (e.code !== 0) failures.push(`a gateway exited with ${e.code ?? e.signal}: ${e.stderr.trim().split('\n').pop() ?? ''}`)
    }
  }
  try {
    for (const port of ports) {
      for (const s of sentinels) {
        const accepted = async (): Promise<boolean> =>
          (await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${s}` } })).status === 200
        await waitUntil(`gateway ${port} to accept the bench keys`, accepted)
      }
    }
    const schedule = weightedSchedule(keys.map((k) => Math.round(k.tally.limit / 60)))
    const start = Date.now()
    const perSecond = new Map<string, number[]>(PLANS.map((p) => [p, []]))
    const ticker = setInterval(() => opts.progress(
      0.05 + 0.9 * Math.min(1, (Date.now() - start) / 1000 / shape.durationS), `driving ${keys.length} keys through ${GATEWAYS} gateways`
    ), 500)
    const drive = async (port: number, offset: number): Promise<autocannon.Result> => {
      let cursor = offset
      return await autocannon({
        url: `http://127.0.0.1:${port}`,
        connections: shape.connections,
        duration: shape.durationS,
        pipelining: 1,
        requests: [{
          method: 'GET',
          path,
          setupRequest: (req: any, context: any) => {
            const k = schedule[cursor++ % schedule.length]!
            context.k = k
            keys[k]!.tally.sent++
            return { ...req, headers: { authorization: `Bearer ${keys[k]!.value}` } }
          },
          onResponse: ((status: number, body: string, context: any, headers: Record<string, string>) => {
            const t = keys[context.k as number]!.tally
            const now = Date.now()
            if (t.firstAt === 0) t.firstAt = now
            t.lastAt = now
            if (status === 200) {
              t.allowed++
              const sec = Math.floor((now - start) / 1000)
              const series = perSecond.get(t.plan)!
              series[sec] = (series[sec] ?? 0) + 1
              if (header(headers, 'ratelimit-limit') !== String(t.limit)) t.badLimitHeader++
            } else if (status === 429) {
              t.limited++
              let retryAfter: unknown
              try { retryAfter = JSON.parse(body).error.retry_after } catch {}
              const badBody = !Number.isInteger(retryAfter) || (retryAfter as number) < 1
              const badHeader = !(Number(header(headers, 'retry-after')) >= 1)
              if (badBody || badHeader) t.badRetry++
            } else {
              t.other++
            }
          }) as any
        }]
      } as autocannon.Options)
    }
    const results = await Promise.all(ports.map(async (port, i) => await drive(port, Math.floor(i * schedule.length / GATEWAYS))))
    clearInterval(ticker)
    opts.progress(0.97, 'stopping gateways')
    await stopGateways()

    const judged = keys.map((k) => judgeKey(k.tally))
    const count = (v: string): number => judged.filter((j) => j.verdict === v).length
    const tallies = keys.map((k) => k.tally)
    const sum = (f: (t: KeyTally) => number): number => tallies.reduce((a, t) => a + f(t), 0)
    if (count('over') > 0) failures.push(`${count('over')} key(s) got more than their plan allows: the limit is not enforced`)
    if (count('starved') > 0) failures.push(`${count('starved')} key(s) got less than 98 % of their expected share`)
    if (sum((t) => t.badRetry) > 0) failures.push(`${sum((t) => t.badRetry)} 429 response(s) lacked retry_after or Retry-After`)
    if (sum((t) => t.badLimitHeader) > 0) {
      failures.push(`${sum((t) => t.badLimitHeader)} 200 response(s) had a RateLimit-Limit other than the plan value`)
    }
    if (sum((t) => t.other) > 0) failures.push(`${sum((t) => t.other)} response(s) were neither 200 nor 429`)
    for (const plan of PLANS) {
      if (!tallies.some((t) => t.plan === plan && t.limited > 0)) {
        failures.push(`no ${plan} key was ever refused: not driven above its limit`)
      }
    }
    const errors = results.reduce((a, r) => a + r.errors + r.timeouts, 0)
    if (errors > 0) notes.push(`${errors} connection error(s) or timeout(s) on the client side.`)
    if (count('underdriven') > 0) {
      notes.push(`${count('underdriven')} key(s) were offered less than 1.3× their allowance, so starvation was not judged for them ` +
        '(the load generator shares the machine).')
    }

    const byPlan = planRows(keys, judged)
    const latency: Table = {
      title: 'Load and latency per gateway process (autocannon)',
      columns: ['gateway', 'connections', 'requests/s (mean)', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', '2xx', 'non-2xx'],
      rows: results.map((r, i) => [
        i + 1, shape.connections, Math.round(r.requests.average),
        r.latency.p50, r.latency.p90, r.latency.p99, r.latency.max, r['2xx'], r.non2xx
      ])
    }
    const seconds = Array.from({ length: shape.durationS }, (_v, i) => i + 1)
    const keyCount = (plan: string): number => tallies.filter((t) => t.plan === plan).length
    const cumulative: Chart = {
      title: 'Allowed requests per key, cumulative, in units of the plan limit',
      kind: 'line',
      xLabel: 'seconds since start',
      yLabel: 'allowed ÷ limit',
      x: seconds,
      series: [
        ...PLANS.map((plan) => {
          let acc = 0
          const per = perSecond.get(plan)!
          const values = seconds.map((s) => { acc += per[s - 1] ?? 0; return acc / keyCount(plan) / PLAN_RATE_LIMITS[plan] })
          return { name: plan, values }
        }),
        { name: 'expected', values: seconds.map((s) => expectedAllowed(1, s)) }
      ]
    }
    const steady: Chart = {
      title: 'Steady allowed rate per key after the burst vs the plan limit',
      kind: 'bar',
      xLabel: 'plan',
      yLabel: 'requests per minute',
      x: PLANS,
      series: [
        { name: 'plan limit', values: PLANS.map((p) => PLAN_RATE_LIMITS[p]) },
        { name: 'measured', values: byPlan.rows.map((r) => Number(r[6])) }
      ]
    }
    const totalRps = Math.round(results.reduce((a, r) => a + r.requests.average, 0))
    const summary = `${keys.length} keys (free/starter/pro) through ${GATEWAYS} gateways for ${shape.durationS} s at ${totalRps} req/s: ` +
      PLANS.map((p) => `${p} ${byPlan.rows[PLANS.indexOf(p)]![6]}/min (limit ${PLAN_RATE_LIMITS[p]})`).join(', ') +
      `; ${count('ok')} keys within ±2 %, ${count('over')} over, ${count('starved')} starved`
    notes.push(`Driven path: GET ${path}. Each key's window runs from its first to its last response; ` +
      'its allowance is limit + limit × seconds / 60.')
    return {
      name: 'ratelimit',
      title: 'Per-key rate limits across two gateway processes',
      quick: opts.quick,
      passed: failures.length === 0,
      summary,
      tables: [byPlan, latency],
      charts: [cumulative, steady],
      notes,
      failures,
      duration_s: 0
    }
  } finally {
    await stopGateways()
  }
}
