import type { Transporter } from 'nodemailer'
import { TestOutbox, type TestOrg } from './outbox.ts'
import { DnsServer } from './dns_server.ts'
import { SmtpSink, type SinkMessage } from './smtp_sink.ts'
import { inboundClient } from './inbound.ts'

/** A delivery status notification as a receiving MTA writes it (RFC 3464), about `originalId` of `domain`. */
export function dsn (r: { to: string, recipient: string, status: string, diagnostic: string, originalId: string, domain: string }): string {
  return [
    'From: Mail Delivery System <MAILER-DAEMON@mx.remote.test>', `To: ${r.to}`, 'Subject: Undelivered Mail Returned to Sender',
    'MIME-Version: 1.0', 'Content-Type: multipart/report; report-type=delivery-status; boundary="=_b"', '',
    '--=_b', 'Content-Type: text/plain; charset=us-ascii', '', 'Your message could not be delivered.', '',
    '--=_b', 'Content-Type: message/delivery-status', '',
    'Reporting-MTA: dns; mx.remote.test', 'Arrival-Date: Sun, 22 Nov 2026 03:00:00 +0000', '',
    `Final-Recipient: rfc822; ${r.recipient}`, 'Action: failed', `Status: ${r.status}`,
    `Diagnostic-Code: smtp; ${r.diagnostic}`, '',
    '--=_b', 'Content-Type: text/rfc822-headers', '',
    `From: news@${r.domain}`, `To: ${r.recipient}`, `Message-ID: <${r.originalId}@${r.domain}>`, 'Subject: Hello', '',
    '--=_b--', ''
  ].join('\r\n')
}

/** An abuse report in the Abuse Reporting Format (RFC 5965) about `originalId` of `domain`. */
export function arf (r: { to: string, recipient: string, originalId: string, domain: string }): string {
  return [
    'From: feedback@isp.test', `To: ${r.to}`, 'Subject: FW: Hello', 'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="=_f"', '',
    '--=_f', 'Content-Type: text/plain', '', 'This is an email abuse report.', '',
    '--=_f', 'Content-Type: message/feedback-report', '',
    'Feedback-Type: abuse', 'User-Agent: ISP-FBL/1.0', 'Version: 1', `Original-Rcpt-To: ${r.recipient}`, '',
    '--=_f', 'Content-Type: message/rfc822', '',
    `From: news@${r.domain}`, `To: ${r.recipient}`, `Message-ID: <${r.originalId}@${r.domain}>`, 'Subject: Hello', '', 'Hi there', '',
    '--=_f--', ''
  ].join('\r\n')
}

export interface SentMessage {
  id: string
  /** The envelope sender it went out with: its VERP return path. */
  returnPath: string
  /** The `mailto:` address of its List-Unsubscribe header. */
  unsubscribeMailto: string
  mail: SinkMessage
}

/**
 * One Outbox (gateway, engine and inbound) relaying every send to an SMTP sink, so messages are really sent and
 * recorded, their return paths really issued; reports then come back through the inbound SMTP server.
 */
export class ReportScenario {
  private constructor (readonly ob: TestOutbox, readonly sink: SmtpSink, readonly dns: DnsServer, readonly smtp: Transporter) {}

  /** `env`: more settings for the Outbox. */
  static async start (env: Record<string, string> = {}): Promise<ReportScenario> {
    const dns = await DnsServer.start({})
    const sink = await SmtpSink.start()
    const ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address, OB_SMTP_RELAY: sink.url, ...env } })
    return new ReportScenario(ob, sink, dns, inboundClient(ob))
  }

  /** Sends one message from `org` to `rcpt` through the API and waits until the sink has it. */
  async send (org: TestOrg, rcpt: string, tags?: string[]): Promise<SentMessage> {
    const r = await this.ob.request('POST', '/v1/messages/send', {
      key: org.adminKey,
      body: {
        from: `news@${org.domain}`, to: rcpt, subject: 'Hello', text: 'Hi there', track_opens: false, track_clicks: false,
        ...(tags !== undefined ? { tags } : {})
      }
    })
    if (r.status !== 202) throw new Error(`send failed: ${r.status} ${r.text}`)
    const id = r.body.id as string
    const byId = (): SinkMessage | undefined => this.sink.messages.find((m) => m.messageId === `<${id}@${org.domain}>`)
    await this.sink.until(() => byId() !== undefined)
    const mail = byId()!
    const mailto = /<mailto:([^?>]+)\?subject=unsubscribe>/.exec(mail.headers.get('list-unsubscribe') ?? '')?.[1]
    if (mailto === undefined) throw new Error(`no mailto in List-Unsubscribe: ${mail.headers.get('list-unsubscribe')}`)
    return { id, returnPath: mail.mailFrom, unsubscribeMailto: mailto, mail }
  }

  /** Hands `raw` to the inbound SMTP server for `to`; rejects with the SMTP error when refused. */
  async deliver (to: string, raw: string): Promise<void> {
    await this.smtp.sendMail({ envelope: { from: '', to: [to] }, raw })
  }

  /** `outbox_inbound_reports_dropped_total{reason}` from GET /metrics. */
  async dropped (reason: string): Promise<number> {
    const text = (await this.ob.request('GET', '/metrics')).text
    const m = new RegExp(`^outbox_inbound_reports_dropped_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text)
    return m === null ? 0 : Number(m[1])
  }

  async close (): Promise<void> {
    this.smtp.close()
    await this.ob.close()
    await this.sink.close()
    await this.dns.close()
  }
}
