import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { plainLoop } from './engine.ts'
import { cpuSnapshot } from './proc_cpu.ts'
import { bookFailures, keepBooks, type AcceptedSend } from './e2e_accounting.ts'
import { runPhase, type Phase } from './e2e_phase.ts'
import { startE2eWorld, type E2eWorld } from './e2e_world.ts'
import { e2eReport, type PlainPool } from './e2e_report.ts'
import { scrapeLoop, scrapeMsArg } from './scrape.ts'
import type { BenchOptions, BenchResult } from './types.ts'

/**
 * End to end, the figure users judge Outbox on: `POST /v1/messages/send` from 64 concurrent senders (5 KB HTML,
 * open and click tracking on) while the same Outbox process delivers to an SMTP sink and posts signed
 * `delivered` webhooks to an HTTPS receiver, each of those in its own process, on a NATS and a Redis of the
 * bench's own. The reference, in the same run and to the same sink: a plain nodemailer pool (10 connections,
 * nothing durable, no DKIM) sending the same message. Then a curve: accept latency and delivered/s at fixed
 * offered rates. Every accepted message must reach the sink exactly once and get its webhook; that is the
 * only thing that fails the run; speed targets are reported. With `--scrape-ms=N`, every /metrics of the run's
 * Outbox processes is fetched every N ms for the whole run, and the report says so and counts the scrapes.
 */
export const SENDERS = 64
const FULL = { messages: 50_000, warmup: 2000, rates: [200, 400, 800, 1600], pointS: 10 }
const QUICK = { messages: 20_000, warmup: 500, rates: [200, 400, 800, 1600], pointS: 3 }

/** About 5 KB of HTML with twelve links, so click tracking has work to do. */
export const E2E_HTML = '<html><body><h1>Your order #10234 has shipped</h1>' +
  Array.from({ length: 12 }, (_v, k) => `<p>Item ${k + 1}: thank you for your order; this paragraph pads the message to the size of a real receipt with tracking. <a href="https://shop.example.com/orders/10234/items/${k + 1}?ref=email">View item ${k + 1}</a></p>`).join('') +
  '<p>Questions? <a href="https://shop.example.com/help">Visit our help centre</a>.</p></body></html>'

/** The send body, with the send time in an X-Bench-Sent header; built from fixed parts, as cheaply as a client can. */
export function bodyMaker (domain: string): (i: number, sentAt: number) => string {
  const head = `{"from":"Acme <orders@${domain}>","to":"customer`
  const mid = '@dest.example","subject":"Your order #10234 has shipped","html":' + JSON.stringify(E2E_HTML) +
    ',"text":"Your order #10234 has shipped.","track_opens":true,"track_clicks":true,"headers":{"X-Bench-Sent":"'
  return (i, sentAt) => `${head}${i}${mid}${sentAt}"}}`
}

async function plainPool (w: E2eWorld, domain: string, n: number): Promise<PlainPool> {
  const sink0 = await w.sink.accepted()
  const cpu = cpuSnapshot([process.pid, w.sink.pid])
  const t0 = performance.now()
  await plainLoop(w.sink, { from: `Acme <orders@${domain}>`, html: E2E_HTML }, n)
  const seconds = (performance.now() - t0) / 1000
  const cpuUs = cpu()
  await w.sink.until(sink0 + n)
  return { messages: n, seconds: Math.round(seconds * 100) / 100, perS: Math.round(n / seconds), cpuUsPerMsg: Math.round(cpuUs / n) }
}

/**
 * `--messages=N` and `--point-s=N` shorten a run by hand (e.g. to check the bench itself); the defaults are the figures' plan.
 * `--profile=DIR` runs Outbox with `--cpu-prof`, its main thread's and worker threads' profiles written to DIR;
 * `--node-flags="…"` gives Outbox's node more flags (space-separated).
 */
function planOf (opts: BenchOptions): typeof FULL {
  const base = opts.quick ? QUICK : FULL
  const positive = (v: string | undefined, fallback: number): number =>
    v !== undefined && Number.isInteger(Number(v)) && Number(v) > 0 ? Number(v) : fallback
  const messages = positive(opts.args.messages, base.messages)
  return { ...base, messages, warmup: Math.min(base.warmup, messages), pointS: positive(opts.args['point-s'], base.pointS) }
}

export async function runE2eBench (opts: BenchOptions): Promise<BenchResult> {
  const plan = planOf(opts)
  // `--scrape-ms=N`: every /metrics of the run's Outbox processes is fetched every N ms from start to end.
  const scrapeMs = scrapeMsArg(opts.args)
  const started = Date.now()
  const loadStart = loadavg()[0]!
  opts.progress(0, 'starting NATS, Redis, sink, receiver and outbox start')
  const w = await startE2eWorld({
    ...(opts.args.profile !== undefined ? { profileDir: resolve(opts.args.profile) } : {}),
    ...(opts.args['node-flags'] !== undefined ? { nodeFlags: opts.args['node-flags'].split(' ').filter((f) => f !== '') } : {})
  })
  const scraping = scrapeMs !== undefined ? scrapeLoop(w.metrics, scrapeMs) : undefined
  try {
    const body = bodyMaker(w.domain)
    opts.progress(0.02, `plain nodemailer pool, ${plan.messages} messages`)
    const plain = await plainPool(w, `plain.${w.domain}`, plan.messages)
    const steps = 2 + plan.rates.length
    const step = (k: number, label: string) => (f: number) => { opts.progress(0.1 + 0.9 * (k + f) / steps, label) }
    const warmup = await runPhase(w, 'warm-up', { count: plan.warmup, concurrency: SENDERS }, body, step(0, 'warm-up'))
    const main = await runPhase(
      w, `${SENDERS} senders, unbounded`, { count: plan.messages, concurrency: SENDERS }, body,
      step(1, `${plan.messages} sends at ${SENDERS} senders`)
    )
    const curve: Phase[] = []
    for (const [k, rate] of plan.rates.entries()) {
      const point = { count: rate * plan.pointS, concurrency: SENDERS, ratePerS: rate }
      curve.push(await runPhase(w, `offered ${rate}/s`, point, body, step(2 + k, `curve: ${rate}/s offered`)))
    }
    // The books over every phase at once: a message of one phase arriving during another still counts, once.
    const phases = [warmup, main, ...curve]
    const accepted: AcceptedSend[] = phases.flatMap((p) => p.load.accepted)
    const [arrivals, report] = await Promise.all([w.sink.arrivals(), w.receiver.report()])
    const books = keepBooks(accepted, arrivals, report.perMessage, w.domain)
    const failures = bookFailures(books)
    if (w.outbox.exitCode !== null || w.outbox.signalCode !== null) {
      failures.push(`outbox start exited during the run (${w.outbox.exitCode ?? w.outbox.signalCode})`)
    }
    if (report.bad > 0) failures.push(`${report.bad} webhook request(s) with a bad signature or not a \`delivered\` event`)
    const scraped = await scraping?.stop()
    for (const s of scraped ?? []) {
      if (s.failed > 0) failures.push(`${s.failed} scrape(s) of ${s.url} failed (first: ${s.firstError ?? ''})`)
    }
    const scrape = scrapeMs !== undefined && scraped !== undefined ? { everyMs: scrapeMs, counts: scraped } : undefined
    return e2eReport({
      quick: opts.quick,
      started,
      loadStart,
      senders: SENDERS,
      plain,
      main,
      curve,
      books,
      pointS: plan.pointS,
      failures,
      ...(scrape !== undefined ? { scrape } : {})
    })
  } finally {
    await scraping?.stop()
    await w.close()
  }
}
