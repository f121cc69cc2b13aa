import { createTransport } from 'nodemailer'
import { Pool } from 'undici'
import { E2E_HTML } from './e2e.ts'
import { latencyOf, type Latency } from './peers_books.ts'

/**
 * The side-by-side benchmark's senders: `senders` applications, each with one connection of its own, sending one
 * message after another (a 5 KB HTML receipt, one recipient) as fast as the answers come. By SMTP (nodemailer,
 * one pooled connection per sender: STARTTLS and AUTH when the server asks for them) or by Outbox's HTTP API
 * (undici, one keep-alive connection per sender). `control.stop` ends every sender after its current message
 * (the kill phase); `onAccepted` is told the running count of accepts.
 */
export interface LoadControl { stop: boolean, onAccepted?: (accepted: number) => void }

export interface Sent { messageId: string, sentAt: number }

export interface LoadResult {
  accepted: Sent[]
  /** What was not accepted: the SMTP reply code, the HTTP status or the error code, with its count. */
  refused: Map<string, number>
  latency: Latency
  startedAt: number
  firstAcceptAt: number
  lastAcceptAt: number
}

const SUBJECT = 'Your order #10234 has shipped'
const TEXT = 'Your order #10234 has shipped.'

class Books {
  readonly accepted: Sent[] = []
  readonly refused = new Map<string, number>()
  readonly latencies: number[] = []
  readonly startedAt = Date.now()
  firstAcceptAt = 0
  lastAcceptAt = 0
  next = 0

  constructor (private readonly control: LoadControl) {}

  ok (messageId: string, sentAt: number, t0: number): void {
    const now = Date.now()
    this.latencies.push(performance.now() - t0)
    this.accepted.push({ messageId, sentAt })
    if (this.firstAcceptAt === 0) this.firstAcceptAt = now
    this.lastAcceptAt = now
    this.control.onAccepted?.(this.accepted.length)
  }

  refuse (why: string, t0: number): void {
    this.latencies.push(performance.now() - t0)
    this.refused.set(why, (this.refused.get(why) ?? 0) + 1)
  }

  result (): LoadResult {
    return {
      accepted: this.accepted,
      refused: this.refused,
      latency: latencyOf(this.latencies),
      startedAt: this.startedAt,
      firstAcceptAt: this.firstAcceptAt,
      lastAcceptAt: this.lastAcceptAt
    }
  }
}

export interface SmtpTarget {
  port: number
  /** Outbox's submission: STARTTLS required and AUTH with the API key. Postfix on loopback: neither. */
  auth?: { user: string, pass: string }
  from: string
  /** Message-IDs are `<peers.<tag>.<n>@<domain>>`: unique per phase, so the sink's books can tell phases apart. */
  tag: string
  domain: string
}

export async function smtpLoad (t: SmtpTarget, count: number, senders: number, control: LoadControl): Promise<LoadResult> {
  const b = new Books(control)
  const sender = async (): Promise<void> => {
    const transport = createTransport({
      host: '127.0.0.1',
      port: t.port,
      pool: true,
      maxConnections: 1,
      maxMessages: Infinity,
      ...(t.auth !== undefined ? { requireTLS: true, auth: t.auth, tls: { rejectUnauthorized: false } } : { ignoreTLS: true }),
      connectionTimeout: 10_000,
      socketTimeout: 30_000
    })
    try {
      while (!control.stop && b.next < count) {
        const i = b.next++
        const sentAt = Date.now()
        const t0 = performance.now()
        const messageId = `<peers.${t.tag}.${i}@${t.domain}>`
        try {
          await transport.sendMail({
            from: `Acme <${t.from}>`, to: `customer${i}@dest.example`, subject: SUBJECT, html: E2E_HTML, text: TEXT, messageId,
            headers: { 'X-Bench-Sent': String(sentAt) }
          })
          b.ok(messageId, sentAt, t0)
        } catch (err) {
          const e = err as { responseCode?: number, code?: string }
          b.refuse(String(e.responseCode ?? e.code ?? 'error'), t0)
        }
      }
    } finally {
      transport.close()
    }
  }
  await Promise.all(Array.from({ length: senders }, sender))
  return b.result()
}

export interface HttpTarget { baseUrl: string, key: string, from: string, domain: string }

export async function httpLoad (t: HttpTarget, count: number, senders: number, control: LoadControl): Promise<LoadResult> {
  const b = new Books(control)
  const pool = new Pool(t.baseUrl, { connections: senders, pipelining: 1, keepAliveTimeout: 30_000 })
  const headers = { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' }
  const head = `{"from":"Acme <${t.from}>","to":"customer`
  // The same message as by SMTP: tracking off, as neither Postfix nor a submitted message rewrites links.
  const mid = `@dest.example","subject":${JSON.stringify(SUBJECT)},"html":${JSON.stringify(E2E_HTML)},` +
    `"text":${JSON.stringify(TEXT)},"track_opens":false,"track_clicks":false,"headers":{"X-Bench-Sent":"`
  const sender = async (): Promise<void> => {
    while (!control.stop && b.next < count) {
      const i = b.next++
      const sentAt = Date.now()
      const t0 = performance.now()
      try {
        const res = await pool.request({
          path: '/v1/messages/send',
          method: 'POST',
          headers,
          body: `${head}${i}${mid}${sentAt}"}}`,
          headersTimeout: 30_000,
          bodyTimeout: 30_000
        })
        const text = await res.body.text()
        if (res.statusCode === 202) b.ok(`<${(JSON.parse(text) as { id: string }).id}@${t.domain}>`, sentAt, t0)
        else b.refuse(String(res.statusCode), t0)
      } catch (err) {
        b.refuse(String((err as { code?: string }).code ?? 'error'), t0)
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: senders }, sender))
  } finally {
    await pool.close()
  }
  return b.result()
}
