import { Worker } from 'node:worker_threads'
import { SMTPServer } from 'smtp-server'
import { fetch } from 'undici'
import { createTransport } from 'nodemailer'
import { TestOutbox } from '../test/helpers/outbox.ts'
import { freePort } from '../test/helpers/ports.ts'
import { submissionTls } from '../gateway/submission/tls.ts'
import type { BenchOptions, BenchResult } from './types.ts'

/**
 * SMTP submission throughput: messages/s from a pooled nodemailer client (STARTTLS + AUTH, 8 connections) until
 * each is answered `250 … queued as` (authenticated, checked, rate-limited, published to JetStream with its PubAck),
 * against a bare smtp-server with the same TLS and AUTH whose onData only drains the stream, in the same run.
 * Then the per-key limit with HTTP and SMTP sending on one key at once: what both accept together must stay
 * within the plan's bucket.
 */
const ROUNDS = 3
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const now = (): number => performance.timeOrigin + performance.now()

async function sendAll (port: number, count: number, from: string, password: string): Promise<number> {
  const w = new Worker(new URL('./submission_sender.js', import.meta.url), {
    workerData: { port, count, from, to: 'someone@dest.test', password }
  })
  const { startedAt } = await new Promise<{ startedAt: number }>((resolve, reject) => {
    w.once('message', resolve)
    w.once('error', reject)
    w.once('exit', (code) => { if (code !== 0) reject(new Error(`sender exited with ${code}`)) })
  })
  return count / ((now() - startedAt) / 1000)
}

async function bareServer (): Promise<{ port: number, close: () => Promise<void> }> {
  const tls = await submissionTls({}, 'localhost')
  const server = new SMTPServer({
    key: tls.key, cert: tls.cert, authMethods: ['PLAIN', 'LOGIN'], logger: false,
    onAuth (_a, _s, cb) { cb(null, { user: 'x' }) },
    onData (stream, _s, cb) { stream.on('end', () => cb()); stream.resume() }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.server.address() as { port: number }).port,
    close: async () => { await new Promise<void>((resolve) => server.close(() => resolve())) }
  }
}

interface LimitFigures {
  perMinute: number
  seconds: number
  http: number
  smtp: number
  refusedHttp: number
  refusedSmtp: number
  allowed: number
}

/** HTTP and SMTP send on one free-plan key (60 a minute, burst 60) for `seconds`; both count against one bucket. */
async function sharedLimit (ob: TestOutbox, seconds: number): Promise<LimitFigures> {
  const org = await ob.org('free')
  const key = await ob.key(org, ['send'])
  const deadline = Date.now() + seconds * 1000
  const f: LimitFigures = { perMinute: 60, seconds, http: 0, smtp: 0, refusedHttp: 0, refusedSmtp: 0, allowed: 0 }
  const started = Date.now()
  // SMTP's first message needs a TLS handshake and AUTH that a local HTTP request does not: left to race, HTTP can
  // spend the whole burst before SMTP's first DATA arrives. HTTP starts once SMTP's first message is answered, so both
  // are seen drawing on the one bucket; from then on they send side by side.
  let smtpStarted!: () => void
  const smtpFirstAnswered = new Promise<void>((resolve) => { smtpStarted = resolve })
  const http = (async () => {
    await smtpFirstAnswered
    while (Date.now() < deadline) {
      const r = await fetch(`${ob.baseUrl}/v1/messages/send`, {
        method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: `app@${org.domain}`, to: 'limit@dest.test', subject: 'x', text: 'x' })
      })
      await r.text()
      if (r.status === 202) f.http++
      else if (r.status === 429) f.refusedHttp++
      else throw new Error(`HTTP send answered ${r.status}`)
    }
  })()
  const smtp = (async () => {
    const t = createTransport({
      host: '127.0.0.1',
      port: ob.proc.gateway!.submission!.port,
      requireTLS: true,
      auth: { user: 'apikey', pass: key },
      tls: { rejectUnauthorized: false },
      pool: true,
      maxConnections: 1
    })
    while (Date.now() < deadline) {
      try {
        await t.sendMail({ from: `app@${org.domain}`, to: 'limit@dest.test', subject: 'x', text: 'x' })
        f.smtp++
      } catch (err) {
        if (!/^451 4\.7\.1 /.test((err as { response?: string }).response ?? '')) { smtpStarted(); throw err }
        f.refusedSmtp++
      }
      smtpStarted()
    }
    smtpStarted()
    t.close()
  })()
  await Promise.all([http, smtp])
  // GCRA: the burst, plus one per emission interval of the time that passed.
  f.allowed = 60 + Math.floor((Date.now() - started) / 1000)
  return f
}

export async function runSubmissionBench (opts: BenchOptions): Promise<BenchResult> {
  const t0 = Date.now()
  const messages = opts.quick ? 100 : 2000
  const port = await freePort()
  const ob = await TestOutbox.start({
    env: { OB_ROLE: 'gateway', OB_LOG_LEVEL: 'silent', OB_SMTP_SUBMISSION_PORT: String(port), OB_ENTERPRISE_RATE_LIMIT: '1000000' }
  })
  const bare = await bareServer()
  const failures: string[] = []
  try {
    const org = await ob.org('enterprise')
    const key = await ob.key(org, ['send'])
    const from = `app@${org.domain}`
    opts.progress(0.05, 'warm-up')
    await sendAll(port, Math.min(500, messages), from, key)
    await sendAll(bare.port, Math.min(500, messages), from, key)
    const outbox: number[] = []
    const baseline: number[] = []
    for (let r = 0; r < (opts.quick ? 1 : ROUNDS); r++) {
      opts.progress(0.1 + r * 0.2, `round ${r + 1}`)
      outbox.push(await sendAll(port, messages, from, key))
      baseline.push(await sendAll(bare.port, messages, from, key))
    }
    const o = median(outbox)
    const b = median(baseline)
    const ratio = o / b
    if (!opts.quick && ratio < 0.5) failures.push(`SMTP submission at ${(ratio * 100).toFixed(0)} % of a bare smtp-server (target ≥ 50 %)`)
    opts.progress(0.75, 'per-key limit across HTTP and SMTP')
    const l = await sharedLimit(ob, opts.quick ? 3 : 10)
    const accepted = l.http + l.smtp
    if (accepted > l.allowed) failures.push(`HTTP and SMTP together were accepted ${accepted} times; the bucket allows ${l.allowed}`)
    if (l.http === 0 || l.smtp === 0) failures.push('one of HTTP or SMTP got nothing through')
    if (l.refusedHttp + l.refusedSmtp === 0) failures.push('the limit never refused anything')
    const summary = `SMTP submission ${o.toFixed(0)} messages/s to 250 ` +
      `(${(ratio * 100).toFixed(0)} % of a bare smtp-server with the same TLS and AUTH); ` +
      `per-key limit across HTTP and SMTP: ${accepted} accepted of ${l.allowed} allowed in ${l.seconds} s`
    process.stdout.write(summary + '\n')
    return {
      name: 'submission',
      title: 'SMTP submission vs a bare smtp-server; the per-key limit across HTTP and SMTP',
      quick: opts.quick,
      passed: failures.length === 0,
      summary,
      failures,
      tables: [
        {
          title: `Messages/s to the 250 reply, ${messages} messages a round, nodemailer pool of 8 connections, ` +
            `STARTTLS + AUTH PLAIN (median of ${outbox.length})`,
          columns: ['server', 'messages/s', 'rounds'],
          rows: [
            ['Outbox SMTP submission (250 after the JetStream PubAck)', Math.round(o), outbox.map((x) => Math.round(x)).join(', ')],
            ['bare smtp-server (onData drains)', Math.round(b), baseline.map((x) => Math.round(x)).join(', ')],
            ['Outbox / bare', `${(ratio * 100).toFixed(0)} %`, '']
          ]
        },
        {
          title: `One free-plan key (${l.perMinute}/min, burst ${l.perMinute}) sending by HTTP and SMTP at once for ${l.seconds} s`,
          columns: ['transport', 'accepted', 'refused (429 / 451 4.7.1)'],
          rows: [['HTTP', l.http, l.refusedHttp], ['SMTP', l.smtp, l.refusedSmtp], ['together', accepted, `bucket allows ${l.allowed}`]]
        }
      ],
      charts: [],
      notes: [
        'The gateway runs alone (OB_ROLE=gateway): the figure is the submission path to the durable 250, not delivery.',
        'In the per-key limit run HTTP starts once SMTP\'s first message is answered (its TLS handshake and AUTH take longer ' +
          'than a local HTTP request), then both send side by side.'
      ],
      duration_s: (Date.now() - t0) / 1000
    }
  } finally {
    await bare.close()
    await ob.close()
  }
}
