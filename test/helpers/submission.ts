import nodemailer, { type Transporter } from 'nodemailer'
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js'
import { authenticate } from 'mailauth'
import { TestOutbox, type TestOrg } from './outbox.ts'
import { freePort } from './ports.ts'
import { SmtpSink } from './smtp_sink.ts'

/** An Outbox (all roles) whose engine relays to a sink of its own, with SMTP submission on a free port. */
export interface SubmissionScenario { ob: TestOutbox, sink: SmtpSink, org: TestOrg, port: number, close: () => Promise<void> }

export async function startSubmissionScenario (
  env: Record<string, string> = {}, plan?: Parameters<TestOutbox['org']>[0]
): Promise<SubmissionScenario> {
  const sink = await SmtpSink.start()
  const port = await freePort()
  const ob = await TestOutbox.start({ env: { OB_ROLE: 'all', OB_SMTP_RELAY: sink.url, OB_SMTP_SUBMISSION_PORT: String(port), ...env } })
  const org = await ob.org(plan)
  return {
    ob,
    sink,
    org,
    port,
    async close () {
      await ob.close()
      await sink.close()
    }
  }
}

/** nodemailer as an application configures it: STARTTLS required, user `apikey`, the key as the password. */
export function submissionClient (
  port: number, key: string, opts: Partial<SMTPTransport.Options> = {}
): Transporter<SMTPTransport.SentMessageInfo> {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    requireTLS: true,
    auth: { user: 'apikey', pass: key },
    // the certificate is the self-signed one made at start
    tls: { rejectUnauthorized: false },
    ...opts
  })
}

/** The `msg_…` id of a `250 2.0.0 queued as msg_…` reply. */
export function queuedId (response: string): string {
  const m = /^250 2\.0\.0 queued as (msg_[0-9a-z]{26})\b/.exec(response)
  if (m === null) throw new Error(`not a queued reply: ${response}`)
  return m[1]!
}

/** mailauth's DKIM verdict on `raw`, with the domain's published TXT record as the only DNS answer. */
export async function dkimResult (ob: TestOutbox, org: TestOrg, raw: Buffer): Promise<string> {
  const domain = ob.proc.cp.domain(org.orgId, org.domainId)!
  const txt = domain.records.find((r) => r.name === `${domain.dkim_selector}._domainkey.${domain.name}`)!
  const resolver = async (name: string, rr: string): Promise<unknown> => {
    if (rr === 'TXT' && name === txt.name) return [[txt.value]]
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
  }
  const result = await authenticate(raw,
    { ip: '127.0.0.1', helo: 'engine.test', sender: 'x@y.z', mta: 'sink.test', resolver } as Parameters<typeof authenticate>[1])
  const sig = result.dkim.results[0]
  return sig?.signingDomain === org.domain ? sig.status.result : `none for ${org.domain}`
}
