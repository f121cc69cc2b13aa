import { writeFileSync, mkdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { testCa } from '../test/helpers/https_receiver.ts'
import { Sink, SLOW_MS, bareLoop, floorRun, webhookRun, type SecondEndpoint } from './webhook_targets.ts'

export { SLOW_MS }

/**
 * Signed webhook deliveries per second to a local HTTPS receiver, against a bare undici loop posting bodies of
 * the same size, signed the same way, to the same receiver with the same number of connections, and against
 * the floor (JetStream read, sign, POST, acknowledge, nothing else), in the same run. Events are published to
 * OB_EVENTS before the clock starts (which starts before the engine's webhook delivery is started), so the
 * figure is the webhook path alone: fan-out, signing, HTTPS, delivery log, acknowledgements. Isolation: the
 * rate to endpoint A alone, and with a second endpoint B subscribed to every event that is dead (accepts, never
 * answers), slow (answers after SLOW_MS) or healthy; the drop a dead or slow B causes is measured against A
 * alone. Every measurement is repeated in alternating rounds and the medians reported: single runs on a shared
 * 2-core machine scatter by ±15 %.
 */
export interface WebhookBenchOptions { events?: number, concurrency?: number, rounds?: number, quick?: boolean, out?: string }

/** One round: every measurement once, in this order. Rates per second. */
export interface WebhookRound { bare: number, floor: number, outbox: number, dead: number, slow: number, healthy: number }

export interface WebhookBenchResult {
  events: number
  concurrency: number
  rounds: number
  /** Medians over the rounds. */
  bare_undici_per_s: number
  floor_per_s: number
  webhooks_per_s: number
  /** Median of each round's Outbox / bare. */
  ratio_to_bare: number
  /** Median of each round's floor / bare: the most any durable delivery reached here. */
  floor_over_bare: number
  /** Median of each round's Outbox / floor: what the engine costs beyond the floor. */
  webhooks_over_floor: number
  /** Rate to the first endpoint while a dead endpoint (accepts, never answers) gets every event too. */
  healthy_with_dead_endpoint_per_s: number
  /** Median of each round's 1 - (A with a dead B) / (A alone): what a dead endpoint costs a healthy one. */
  dead_endpoint_drop: number
  /** Rate to the first endpoint while a slow endpoint (answers after SLOW_MS) gets every event too. */
  healthy_with_slow_endpoint_per_s: number
  /** Median of each round's 1 - (A with a slow B) / (A alone). */
  slow_endpoint_drop: number
  /** Rate to the first endpoint while a second, healthy endpoint gets every event too (twice the requests). */
  healthy_with_second_healthy_endpoint_per_s: number
  per_round: WebhookRound[]
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}
const ratio = (x: number): number => Number(x.toFixed(3))

export async function runWebhookBench (opts: WebhookBenchOptions = {}): Promise<WebhookBenchResult> {
  const events = opts.events ?? (opts.quick === true ? 3000 : 20_000)
  const concurrency = opts.concurrency ?? 16
  const rounds = opts.rounds ?? (opts.quick === true ? 1 : 5)
  const ca = testCa()
  const caPem = readFileSync(ca.caFile, 'utf8')
  const sink = await Sink.start()
  try {
    await bareLoop(sink.healthyPort, Math.min(2000, events), concurrency, caPem) // warm-up
    const perRound: WebhookRound[] = []
    const run = async (second: SecondEndpoint): Promise<number> =>
      await webhookRun({ events, concurrency, second, caFile: ca.caFile, sink })
    for (let i = 0; i < rounds; i++) {
      const bare = await bareLoop(sink.healthyPort, events, concurrency, caPem)
      const floor = await floorRun({ events, concurrency, caPem, sink })
      perRound.push({
        bare, floor, outbox: await run('none'), dead: await run('dead'), slow: await run('slow'), healthy: await run('healthy')
      })
    }
    const of = (f: (r: WebhookRound) => number): number => median(perRound.map(f))
    const result: WebhookBenchResult = {
      events,
      concurrency,
      rounds,
      bare_undici_per_s: Math.round(of((r) => r.bare)),
      floor_per_s: Math.round(of((r) => r.floor)),
      webhooks_per_s: Math.round(of((r) => r.outbox)),
      ratio_to_bare: ratio(of((r) => r.outbox / r.bare)),
      floor_over_bare: ratio(of((r) => r.floor / r.bare)),
      webhooks_over_floor: ratio(of((r) => r.outbox / r.floor)),
      healthy_with_dead_endpoint_per_s: Math.round(of((r) => r.dead)),
      dead_endpoint_drop: ratio(of((r) => 1 - r.dead / r.outbox)),
      healthy_with_slow_endpoint_per_s: Math.round(of((r) => r.slow)),
      slow_endpoint_drop: ratio(of((r) => 1 - r.slow / r.outbox)),
      healthy_with_second_healthy_endpoint_per_s: Math.round(of((r) => r.healthy)),
      per_round: perRound.map((r) => ({
        bare: Math.round(r.bare),
        floor: Math.round(r.floor),
        outbox: Math.round(r.outbox),
        dead: Math.round(r.dead),
        slow: Math.round(r.slow),
        healthy: Math.round(r.healthy)
      }))
    }
    const out = opts.out ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'results', 'webhooks.json')
    mkdirSync(dirname(out), { recursive: true })
    writeFileSync(out, JSON.stringify({ ...result, at: new Date().toISOString(), node: process.version }, null, 2) + '\n')
    return result
  } finally {
    await sink.close()
  }
}

const pct = (x: number): string => `${Math.round(x * 100)} %`
/** A drop as text: "12 % lower", or "5 % higher" when the rate was higher. */
export const relativeDrop = (drop: number): string => drop >= 0 ? `${pct(drop)} lower` : `${pct(-drop)} higher`

/** The figures as a markdown table, as printed by the bench and copied into docs/webhooks.md. */
export function webhookMarkdown (r: WebhookBenchResult): string {
  const rows = [
    `Medians of ${r.rounds} round(s), ${r.events} events each.`,
    '',
    '| measure | deliveries/s |',
    '|---|---|',
    `| bare undici loop (signed bodies, ${r.concurrency} connections) | ${r.bare_undici_per_s} |`,
    `| floor: JetStream read, sign, POST, acknowledge | ${r.floor_per_s} (${pct(r.floor_over_bare)} of the bare loop) |`,
    `| Outbox signed webhook deliveries | ${r.webhooks_per_s} ` +
      `(${pct(r.ratio_to_bare)} of the bare loop, ${pct(r.webhooks_over_floor)} of the floor) |`,
    '| endpoint A, while a **dead** endpoint B gets every event too | ' +
      `${r.healthy_with_dead_endpoint_per_s} (${relativeDrop(r.dead_endpoint_drop)} than A alone) |`,
    `| endpoint A, while a **slow** endpoint B (answers after ${SLOW_MS / 1000} s) gets every event too | ` +
      `${r.healthy_with_slow_endpoint_per_s} (${relativeDrop(r.slow_endpoint_drop)} than A alone) |`,
    '| endpoint A, while a second **healthy** endpoint B gets every event too (twice the requests) | ' +
      `${r.healthy_with_second_healthy_endpoint_per_s} |`
  ]
  if (r.rounds > 1) {
    rows.push(
      '',
      '| round | bare | floor | Outbox | A with dead B | A with slow B | A with healthy B |',
      '|---:|---:|---:|---:|---:|---:|---:|'
    )
    r.per_round.forEach((x, i) => rows.push(`| ${i + 1} | ${x.bare} | ${x.floor} | ${x.outbox} | ${x.dead} | ${x.slow} | ${x.healthy} |`))
  }
  return rows.join('\n')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const quick = process.argv.includes('--quick')
  const r = await runWebhookBench({ quick })
  console.log(JSON.stringify(r))
  console.log('\n' + webhookMarkdown(r))
  process.exit(0)
}
